import {
  type CacheSafeParams,
  estimateMessageTokens,
  estimateTextTokens,
  type Message,
} from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import {
  type CompactConversationInput,
  type CompactRunner,
  compactConversation,
} from "./compact-conversation.js";
import { makeBoundary, messageText, toolResultBlocks } from "./message-shape.js";
import { createMemorySessionMemoryStore } from "./session-memory.js";
import { createCountingFactory, createHistory, createScriptedCompactRunner } from "./testing/index.js";

const TASK = "Port every module under /src/legacy to the async logger; keep the exported names unchanged";
const GOOD = `<summary>\n## Goal and constraints\nPort every module under /src/legacy to the async logger; keep exported names unchanged.\n## Next step\ncontinue\n</summary>`;

function session(rounds = 30) {
  const history = createHistory();
  history.user(TASK);
  for (let i = 0; i < rounds; i++) {
    history.toolCall(
      "Read",
      { file_path: `/src/legacy/m${i}.ts` },
      `export const m${i} = log(${i});\n`.repeat(20),
      {
        thinking: `step ${i}`,
      },
    );
  }
  return history;
}

function params(messages: readonly Message[]): CacheSafeParams {
  return {
    model: "sim-24k",
    systemPrompt: [{ type: "text", text: "You are a coding agent." }],
    tools: [],
    maxOutputTokens: 4_000,
    forkContextMessages: messages,
  };
}

function expectWellFormed(messages: readonly Message[]): void {
  const uses = new Set<string>();
  for (const message of messages) {
    if (message.type === "assistant") {
      for (const block of message.message.content) if (block.type === "tool_use") uses.add(block.id);
    }
    for (const result of toolResultBlocks(message)) expect(uses.has(result.tool_use_id)).toBe(true);
  }
}

/** A compaction (auto unless overridden) of `messages` with a fixed tail budget and deterministic uuids. */
function autoCompact(
  messages: readonly Message[],
  runner: CompactRunner,
  tailTokens: number,
  overrides: Partial<CompactConversationInput> = {},
) {
  return compactConversation({
    messages,
    cacheSafeParams: params(messages),
    runCompact: runner,
    trigger: "auto",
    tailTokens,
    factory: createCountingFactory("c"),
    ...overrides,
  });
}

describe("compactConversation", () => {
  it.each([
    ["carries the running total of the boundary before", 12_000, 12_000],
    ["counts an older boundary's own drop when it has no total", undefined, 5_000],
  ])("R-C4, R-K2: cumulativeDroppedTokens %s", async (_, earlierTotal, before) => {
    const { messages } = session();
    const earlier = makeBoundary(createCountingFactory("e"), "compact_boundary", "compacted before", null, {
      trigger: "auto",
      preTokens: 9_000,
      postTokens: 4_000,
      ...(earlierTotal === undefined ? {} : { cumulativeDroppedTokens: earlierTotal }),
    });
    const outcome = await autoCompact([earlier, ...messages], createScriptedCompactRunner([GOOD]), 800);
    if (!outcome.ok) throw new Error(outcome.error);
    expect(outcome.boundary.compactMetadata?.cumulativeDroppedTokens).toBe(
      before + outcome.preTokens - outcome.postTokens,
    );
  });

  it("R-C4: one summary message replaces the head; compact_boundary has trigger and pre/post tokens; the tail is verbatim", async () => {
    const { messages } = session();
    const runner = createScriptedCompactRunner([GOOD]);
    const outcome = await autoCompact(messages, runner, 800);
    if (!outcome.ok) throw new Error(outcome.error);
    const [boundary, summary, ...tail] = outcome.messages;
    expect(boundary).toMatchObject({ type: "system", subtype: "compact_boundary" });
    expect(boundary?.type === "system" && boundary.compactMetadata).toEqual({
      trigger: "auto",
      preTokens: outcome.preTokens,
      postTokens: outcome.postTokens,
      cumulativeDroppedTokens: outcome.preTokens - outcome.postTokens,
    });
    expect(outcome.postTokens).toBeLessThan(outcome.preTokens / 2);
    expect(messageText(summary!)).toContain("<summary>");
    expect(messageText(summary!)).toContain(`<active-task>\n${TASK}\n</active-task>`);
    // The tail: the very same message objects (thinking blocks untouched), starting at an assistant reply.
    expect(tail[0]?.type).toBe("assistant");
    for (const message of tail) expect(messages).toContain(message);
    expect(tail.at(-1)).toBe(messages.at(-1));
    expectWellFormed(outcome.messages);
  });

  it("R-C4, R-X1: a manual /compact of a history that fits its tail summarises all of it; auto does not run", async () => {
    const { messages } = session(2);
    const whole = 1_000_000;
    const auto = await autoCompact(messages, createScriptedCompactRunner([GOOD]), whole);
    expect(auto).toMatchObject({ ok: false, error: expect.stringContaining("nothing to compact") });
    const runner = createScriptedCompactRunner([GOOD]);
    const outcome = await autoCompact(messages, runner, whole, { trigger: "manual" });
    if (!outcome.ok) throw new Error(outcome.error);
    expect(runner.requests[0]!.cacheSafeParams.forkContextMessages).toBe(messages);
    // The boundary and the summary, nothing kept verbatim.
    expect(outcome.messages.map((message) => message.type)).toEqual(["system", "user"]);
    const text = messageText(outcome.messages[1]!);
    expect(text).toContain(`replaces ${messages.length} earlier messages.`);
    expect(text).not.toContain("follow it");
    expect(outcome.boundary.compactMetadata).toMatchObject({ trigger: "manual" });
    // Once all of it is a summary, nothing the model said is left to compact.
    const again = await autoCompact(outcome.messages, runner, whole, { trigger: "manual" });
    expect(again).toMatchObject({ ok: false, error: expect.stringContaining("nothing to compact") });
    expect(runner.requests).toHaveLength(1);
  });

  it("R-F3: the compact request is the parent's exact parameters with the current history, plus one instruction", async () => {
    const { messages } = session(10);
    const runner = createScriptedCompactRunner([GOOD]);
    const cacheSafeParams = params(messages.slice(0, -2));
    await compactConversation({
      messages,
      cacheSafeParams,
      runCompact: runner,
      trigger: "manual",
      instructions: "mind the tests",
    });
    const request = runner.requests[0]!;
    expect({ ...request.cacheSafeParams, forkContextMessages: [] }).toEqual({
      ...cacheSafeParams,
      forkContextMessages: [],
    });
    expect(request.cacheSafeParams.forkContextMessages).toBe(messages);
    expect(request.instruction).toContain("mind the tests");
    expect(request.querySource).toBe("compact");
  });

  it.each([
    [
      "too large, then good → the retry's summary",
      [GOOD.replace("continue", "continue ".repeat(20_000)), GOOD],
      "model",
      1,
    ],
    [
      "dropped the task, then good → the retry's summary",
      ["<summary>Read some files.</summary>", GOOD],
      "model",
      1,
    ],
    [
      "rejected twice → truncation fallback",
      ["<summary>nothing</summary>", "<summary>still nothing</summary>"],
      "truncation",
      2,
    ],
  ] as const)("R-C4: a summary %s", async (_name, script, source, rejected) => {
    const { messages } = session();
    const runner = createScriptedCompactRunner(script);
    const outcome = await compactConversation({
      messages,
      cacheSafeParams: params(messages),
      runCompact: runner,
      trigger: "auto",
      tailTokens: 800,
    });
    if (!outcome.ok) throw new Error(outcome.error);
    expect(outcome.source).toBe(source);
    expect(outcome.rejections.length).toBe(rejected);
    expect(messageText(outcome.messages[1]!)).toContain(TASK);
    if (rejected > 0) expect(runner.requests[1]?.instruction).toContain("A previous attempt was rejected");
  });

  it("R-C4: one huge tool result in the protected tail is cut to the tail budget, so the compaction shrinks the context", async () => {
    // The CLI bug: a Read of ~20k tokens not yet answered; the shortest valid tail (the Read's
    // tool_use and its result) held it verbatim, and the boundary reported post > pre.
    const history = createHistory();
    history.user(TASK);
    const read = history.toolCall(
      "Read",
      { file_path: "/src/legacy/big.md" },
      "line of the big notes file\n".repeat(3_000),
      {
        thinking: "read the notes first",
      },
    );
    const { messages } = history;
    const runner = createScriptedCompactRunner([GOOD]);
    const outcome = await autoCompact(messages, runner, 2_700);
    if (!outcome.ok) throw new Error(outcome.error);
    expect(outcome.preTokens).toBeGreaterThan(15_000);
    expect(outcome.postTokens).toBeLessThan(outcome.preTokens);
    expect(outcome.postTokens).toBeLessThan(2_700 + 500);
    // post_tokens is the count of what is sent next: the summary message and the cut tail.
    const [, summary, ...tail] = outcome.messages;
    const sent = [summary!, ...tail].reduce((n, m) => n + estimateMessageTokens(m), 0);
    expect(outcome.postTokens).toBe(
      sent + estimateTextTokens(JSON.stringify(params(messages).systemPrompt)) + estimateTextTokens("[]"),
    );
    // The pairing holds, the thinking block and the tool_use are the same objects; only the
    // result's content was cut (its head kept, with a notice).
    expect(tail[0]).toBe(read.use);
    expectWellFormed(outcome.messages);
    const text = messageText(tail[1]!);
    expect(text.startsWith("line of the big notes file\n")).toBe(true);
    expect(text).toContain("characters cut by compaction");
    // The compact request saw the result whole and was told it will be cut.
    expect(JSON.stringify(runner.requests[0]!.cacheSafeParams.forkContextMessages)).toBe(
      JSON.stringify(messages),
    );
    expect(runner.requests[0]!.instruction).toContain("The newest tool results (Read) are too large to keep");
  });

  it("R-C4: a compaction that would not get under its line, or would not shrink the context, is a failure (data)", async () => {
    // The tail's own content is what is large — a thinking block, which is never modified.
    const longPlan = { thinking: "a long plan that the tail keeps verbatim. ".repeat(600) };
    const big = session();
    const last = big.toolCall("Bash", { command: "ls" }, "a\n", longPlan);
    const overLine = await autoCompact(big.messages, createScriptedCompactRunner([GOOD]), 100, {
      maxPostTokens: 2_000,
    });
    expect(overLine).toMatchObject({
      ok: false,
      error: expect.stringMatching(/not under the limit of 2000/),
    });
    expect(big.messages.at(-2)).toBe(last.use);

    // Without a line: when the replaced head is smaller than the summary message, the
    // compaction cannot shrink the context.
    const small = createHistory();
    small.user(TASK);
    small.toolCall("Bash", { command: "ls" }, "a\n", longPlan);
    const noShrink = await autoCompact(small.messages, createScriptedCompactRunner([GOOD]), 100, {
      trigger: "manual",
    });
    expect(noShrink).toMatchObject({
      ok: false,
      error: expect.stringMatching(/would not shrink the context/),
    });
  });

  it("R-C4: a runner failure is an expected failure (data), not a throw", async () => {
    const { messages } = session();
    const outcome = await compactConversation({
      messages,
      cacheSafeParams: params(messages),
      runCompact: createScriptedCompactRunner([new Error("overloaded")]),
      trigger: "auto",
    });
    expect(outcome).toMatchObject({ ok: false, error: "overloaded" });
  });

  it("R-C6: a compact request that is itself too long is retried once without the oldest messages", async () => {
    const { messages } = session();
    const runner = createScriptedCompactRunner([
      new Error("prompt is too long: 9000 tokens > 6000 maximum"),
      GOOD,
    ]);
    const outcome = await compactConversation({
      messages,
      cacheSafeParams: params(messages),
      runCompact: runner,
      trigger: "reactive",
      tailTokens: 800,
    });
    expect(outcome.ok).toBe(true);
    const [first, second] = runner.requests.map((r) => r.cacheSafeParams.forkContextMessages);
    expect(second!.length).toBeLessThan(first!.length);
    expect(second![0]).toBe(messages[0]);
    expectWellFormed(second!);
  });

  it("R-C5: starts from session notes that cover the replaced part, without a compact request", async () => {
    const { messages } = session();
    const covered = messages.at(-5)!;
    const store = createMemorySessionMemoryStore({
      text: GOOD,
      coveredUuid: covered.uuid,
      tokensAtUpdate: 1,
    });
    const runner = createScriptedCompactRunner([new Error("must not be called")]);
    const outcome = await compactConversation({
      messages,
      cacheSafeParams: params(messages),
      runCompact: runner,
      trigger: "auto",
      sessionNotes: await store.load(),
    });
    if (!outcome.ok) throw new Error(outcome.error);
    expect(outcome.source).toBe("session_memory");
    expect(runner.requests).toHaveLength(0);
    const keptFrom = outcome.messages.indexOf(messages.find((m) => m.uuid === outcome.messages[2]?.uuid)!);
    expect(keptFrom).toBe(2);
    expect(messages.indexOf(outcome.messages[2]!)).toBeLessThanOrEqual(messages.indexOf(covered) + 1);
    expectWellFormed(outcome.messages);
  });

  it("R-C4: re-attaches the most recently touched files within the token budget, current content from disk", async () => {
    const { messages } = session();
    const read: string[] = [];
    const outcome = await compactConversation({
      messages,
      cacheSafeParams: params(messages),
      runCompact: createScriptedCompactRunner([GOOD]),
      trigger: "auto",
      tailTokens: 800,
      recentFiles: {
        maxTokens: 120,
        readFile: async (path) => {
          read.push(path);
          return `current content of ${path}`;
        },
      },
    });
    if (!outcome.ok) throw new Error(outcome.error);
    const text = messageText(outcome.messages[1]!);
    const attached = [...text.matchAll(/<file path="([^"]+)">/g)].map((m) => m[1]);
    expect(attached.length).toBeGreaterThan(0);
    expect(attached.length).toBeLessThan(30);
    // Newest first, and never a file the verbatim tail already shows.
    expect(attached[0]).toBe(read[0]);
    const tailText = outcome.messages.slice(2).map(messageText).join("\n");
    for (const path of attached) expect(tailText).not.toContain(`"${path}"`);
  });
});
