import {
  type AutoCompactTracking,
  type CacheSafeParams,
  type ContextStageInput,
  createUserMessage,
  type Message,
  type ModelInfo,
  toApiMessages,
} from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { apiMicrocompactEdits } from "./api-microcompact.js";
import type { CompactionEvent } from "./events.js";
import { CLEARED_TOOL_RESULT } from "./microcompact.js";
import { createContextPipeline } from "./pipeline.js";
import { createMemorySessionMemoryStore } from "./session-memory.js";
import { createHistory, createScriptedCompactRunner } from "./testing/index.js";

const MODEL: ModelInfo = {
  id: "sim-24k",
  contextWindow: 24_000,
  maxOutputTokens: 4_000,
  inputPricePerMTok: 1,
  outputPricePerMTok: 5,
};
// effective window 20,000 → auto-compact at 7,000, blocking limit at 17,000 (R-C7).
const TASK = "Rename the config loader to loadSettings everywhere and update the docs";
const GOOD = `<summary>\n## Goal and constraints\nRename the config loader to loadSettings everywhere and update the docs.\n</summary>`;

const fresh: AutoCompactTracking = { compacted: false, turnCounter: 0, turnId: "t0", consecutiveFailures: 0 };

/** A history of about `tokens` estimated tokens of tool rounds under one task. */
function historyOf(tokens: number): Message[] {
  const history = createHistory();
  history.user(TASK);
  let i = 0;
  const total = () =>
    history.messages.at(-2)?.type === "assistant"
      ? (history.messages.at(-2) as { message: { usage: { input_tokens: number } } }).message.usage
          .input_tokens
      : 0;
  while (total() < tokens) {
    history.toolCall(
      "Bash",
      { command: `grep -n config src/part${i}.ts` },
      `src/part${i}.ts:${i}: const config = load();\n`.repeat(12),
    );
    i++;
  }
  return history.messages;
}

function input(messages: readonly Message[], overrides: Partial<ContextStageInput> = {}): ContextStageInput {
  const cacheSafeParams: CacheSafeParams = {
    model: MODEL.id,
    systemPrompt: [{ type: "text", text: "agent" }],
    tools: [],
    maxOutputTokens: 4_000,
    forkContextMessages: messages,
  };
  return {
    messages,
    model: MODEL.id,
    querySource: "repl_main_thread",
    tools: [],
    tracking: fresh,
    cacheSafeParams,
    signal: new AbortController().signal,
    ...overrides,
  };
}

describe("createContextPipeline", () => {
  it("R-X1: SessionStart `compact` context follows the summary as text for the model (model_context), which a model with system messages gets after the next prompt, as Claude Code sends it (claude-cli scenario hooks-compact-context)", async () => {
    const pipeline = createContextPipeline({
      runCompact: createScriptedCompactRunner([GOOD]),
      modelOverrides: [MODEL],
      onCompacted: async () => ["SessionStart hook additional context: KEEP-TESTS-GREEN"],
    });
    const outcome = await pipeline.compactNow(input(historyOf(7_500)));
    if (!outcome.ok) throw new Error(outcome.error);
    const [, summary, context] = outcome.messages;
    expect(context).toMatchObject({
      type: "system",
      subtype: "model_context",
      content: "SessionStart hook additional context: KEEP-TESTS-GREEN",
      parentUuid: summary?.uuid,
    });
    // Nothing kept after the summary (Claude Code's /compact): the context follows the next prompt.
    const bye = createUserMessage("Say bye.");
    const sent = toApiMessages([...outcome.messages.slice(0, 3), bye], { systemMessages: true });
    expect(sent.map((message) => message.role)).toEqual(["user", "system"]);
    expect(JSON.stringify(sent[0])).toContain("Say bye.");
    expect(JSON.stringify(sent[1])).toContain("KEEP-TESTS-GREEN");
    // A kept tail that starts with the model's turn: it stands between the summary and the tail.
    const next = [...outcome.messages, bye];
    const withTail = toApiMessages(next, { systemMessages: true });
    expect(withTail.slice(0, 3).map((message) => message.role)).toEqual(["user", "system", "assistant"]);
    // Its tokens count toward what the compaction left (it is sent).
    expect(pipeline.tokenCount(next)).toBeGreaterThan(pipeline.tokenCount(next.filter((m) => m !== context)));
  });

  it("R-C4: auto-compacts at the threshold, and the corrected count stops a second compaction", async () => {
    const runner = createScriptedCompactRunner([GOOD]);
    const pipeline = createContextPipeline({ runCompact: runner, modelOverrides: [MODEL] });
    const below = historyOf(6_000);
    expect((await pipeline.autocompact(input(below))).messages).toBe(below);
    expect(runner.requests).toHaveLength(0);

    const over = historyOf(7_500);
    expect(pipeline.tokenCount(over)).toBeGreaterThanOrEqual(7_000);
    const result = await pipeline.autocompact(input(over));
    expect(runner.requests).toHaveLength(1);
    expect(result.boundaries[0]).toMatchObject({
      subtype: "compact_boundary",
      compactMetadata: { trigger: "auto" },
    });
    expect(result.tracking).toMatchObject({ compacted: true, consecutiveFailures: 0 });
    expect(pipeline.tokenCount(result.messages)).toBeLessThan(7_000);
    // Same latest response (stale usage): the pipeline's own count keeps it from compacting again.
    const again = await pipeline.autocompact(input(result.messages, { tracking: result.tracking }));
    expect(again.messages).toBe(result.messages);
    expect(runner.requests).toHaveLength(1);
  });

  it("R-C4/R-L11: failures count up in tracking; at 3 the breaker is open and no request is made", async () => {
    const runner = createScriptedCompactRunner([new Error("boom")]);
    const events: CompactionEvent[] = [];
    const pipeline = createContextPipeline({
      runCompact: runner,
      modelOverrides: [MODEL],
      onEvent: (e) => events.push(e),
    });
    const over = historyOf(7_500);
    let tracking = fresh;
    for (let i = 1; i <= 3; i++) {
      tracking = (await pipeline.autocompact(input(over, { tracking }))).tracking;
      expect(tracking.consecutiveFailures).toBe(i);
    }
    const open = await pipeline.autocompact(input(over, { tracking }));
    expect(open.messages).toBe(over);
    expect(runner.requests).toHaveLength(3);
    expect(events.at(-1)).toEqual({ type: "breaker_open", consecutiveFailures: 3 });
  });

  it("R-C4/R-L11: a compaction that cannot get under the auto-compact line is a failure: history unchanged, breaker counts", async () => {
    const runner = createScriptedCompactRunner([GOOD]);
    const events: CompactionEvent[] = [];
    const pipeline = createContextPipeline({
      runCompact: runner,
      modelOverrides: [MODEL],
      onEvent: (e) => events.push(e),
    });
    // The newest assistant message carries ~7k tokens of thinking: the protected tail must keep
    // it unmodified, so no summary can bring the history under the 7,000 line.
    const history = createHistory();
    history.user(TASK);
    for (let i = 0; i < 25; i++)
      history.toolCall("Bash", { command: `cat part${i}` }, `part ${i}: x = 1;\n`.repeat(12));
    history.toolCall("Bash", { command: "ls" }, "a\n", {
      thinking: "a long plan kept verbatim. ".repeat(1_100),
    });
    const over = history.messages;
    const result = await pipeline.autocompact(input(over));
    expect(runner.requests).toHaveLength(1);
    expect(result.messages).toBe(over);
    expect(result.boundaries).toEqual([]);
    expect(result.tracking.consecutiveFailures).toBe(1);
    expect(events.at(-1)).toMatchObject({
      type: "compact_failed",
      trigger: "auto",
      error: expect.stringMatching(/not under the limit of 7000/),
    });
  });

  it("R-L3: a compact or session-memory request passes through every stage unchanged (its prefix must match the parent's)", async () => {
    const runner = createScriptedCompactRunner([GOOD]);
    const pipeline = createContextPipeline({ runCompact: runner, modelOverrides: [MODEL], maxMessages: 10 });
    const over = historyOf(12_000);
    for (const querySource of ["compact", "session_memory"]) {
      const stage = input(over, { querySource });
      expect(pipeline.budgetAndSnip(stage).messages).toBe(over);
      expect((await pipeline.microcompact(stage)).messages).toBe(over);
      expect((await pipeline.autocompact(stage)).messages).toBe(over);
      expect(await pipeline.reactiveCompact(stage)).toBeNull();
    }
    expect(runner.requests).toHaveLength(0);
  });

  it("R-C2: microcompact clears old results between its trigger and the auto-compact line, not at it", async () => {
    const pipeline = createContextPipeline({
      runCompact: createScriptedCompactRunner([GOOD]),
      modelOverrides: [MODEL],
      keepRecentToolResults: 3,
    });
    const mid = historyOf(5_500);
    const result = await pipeline.microcompact(input(mid));
    expect(result.boundaries[0]).toMatchObject({ subtype: "microcompact_boundary" });
    expect(result.tokensFreed).toBeGreaterThan(700);
    const cleared = JSON.stringify(result.messages).split(CLEARED_TOOL_RESULT).length - 1;
    const results = mid.filter((m) => m.type === "user" && typeof m.message.content !== "string").length;
    expect(cleared).toBe(results - 3);
    expect(pipeline.tokenCount(result.messages)).toBe(pipeline.tokenCount(mid) - result.tokensFreed);

    const small = historyOf(2_000);
    expect((await pipeline.microcompact(input(small))).messages).toBe(small);
    const over = historyOf(7_500);
    expect((await pipeline.microcompact(input(over))).messages).toBe(over);
  });

  it("R-C2 (API): with clientMicrocompact false the stage leaves the band alone; apiMicrocompactEdits asks the API for the same lines", async () => {
    const pipeline = createContextPipeline({
      runCompact: createScriptedCompactRunner([GOOD]),
      modelOverrides: [MODEL],
      clientMicrocompact: false,
    });
    const mid = historyOf(5_500);
    const result = await pipeline.microcompact(input(mid));
    expect(result.messages).toBe(mid);
    expect(result.boundaries).toEqual([]);
    // The 24k model's line is 7,000: the edit fires at 60% of it, keeps 5, frees at least 10%.
    expect(apiMicrocompactEdits(MODEL)).toEqual({
      clearToolUses: {
        trigger: { type: "input_tokens", value: 4_200 },
        keep: 5,
        clearAtLeast: 700,
      },
    });
  });

  it("R-C1: snip drops old messages past the message cap and yields a boundary", () => {
    const pipeline = createContextPipeline({
      runCompact: createScriptedCompactRunner([GOOD]),
      modelOverrides: [MODEL],
      maxMessages: 40,
    });
    const long = historyOf(6_000);
    expect(long.length).toBeGreaterThan(40);
    const result = pipeline.budgetAndSnip(input(long));
    expect(result.messages.length).toBeLessThanOrEqual(34);
    expect(result.messages[0]).toBe(long[0]);
    expect(result.messages[1]?.type).toBe("assistant");
    expect(result.boundaries[0]).toMatchObject({ subtype: "snip_boundary" });
    expect(result.tokensFreed).toBeGreaterThan(0);
  });

  it.each([
    ["breaker open", true, 3, true],
    ["auto-compact working (its job)", true, 0, false],
    ["auto-compact off (the loop ends with blocking_limit)", false, 0, false],
  ] as const)("R-C1: over the blocking limit with %s → snip=%s", (_name, enabled, failures, snips) => {
    const pipeline = createContextPipeline({
      runCompact: createScriptedCompactRunner([GOOD]),
      modelOverrides: [MODEL],
      autoCompactEnabled: enabled,
    });
    const over = historyOf(17_500);
    const result = pipeline.budgetAndSnip(
      input(over, { tracking: { ...fresh, consecutiveFailures: failures } }),
    );
    expect(result.messages !== over).toBe(snips);
    if (snips) {
      expect(result.messages[0]).toBe(over[0]);
      expect(pipeline.tokenCount(result.messages)).toBeLessThan(7_000);
    }
  });

  it("R-C6: reactive compact runs even with the breaker open, and returns null when it cannot", async () => {
    const open: AutoCompactTracking = { ...fresh, consecutiveFailures: 3 };
    const ok = createContextPipeline({
      runCompact: createScriptedCompactRunner([GOOD]),
      modelOverrides: [MODEL],
    });
    const over = historyOf(9_000);
    const result = await ok.reactiveCompact(input(over, { tracking: open }));
    expect(result?.boundaries[0]).toMatchObject({ compactMetadata: { trigger: "reactive" } });
    expect(result?.tracking.consecutiveFailures).toBe(0);
    const failing = createContextPipeline({
      runCompact: createScriptedCompactRunner([new Error("no")]),
      modelOverrides: [MODEL],
    });
    expect(await failing.reactiveCompact(input(over, { tracking: open }))).toBeNull();
  });

  it("R-C5: session notes are refreshed by a session_memory request every interval of growth, then used by compaction", async () => {
    const store = createMemorySessionMemoryStore();
    const runner = createScriptedCompactRunner([GOOD]);
    const pipeline = createContextPipeline({
      runCompact: runner,
      modelOverrides: [MODEL],
      sessionMemory: store,
      sessionMemoryIntervalTokens: 2_000,
    });
    const early = historyOf(1_000);
    await pipeline.autocompact(input(early));
    await pipeline.settle();
    expect(runner.requests).toHaveLength(0);

    const grown = historyOf(6_000);
    await pipeline.autocompact(input(grown));
    await pipeline.settle();
    expect(runner.requests.map((r) => r.querySource)).toEqual(["session_memory"]);
    expect((await store.load())?.coveredUuid).toBe(grown.at(-1)?.uuid);

    // Not enough growth since the last notes: no new request.
    await pipeline.autocompact(input(grown));
    await pipeline.settle();
    expect(runner.requests).toHaveLength(1);

    // Over the line, the notes cover everything but the newest messages: no compact request.
    const events: CompactionEvent[] = [];
    const withEvents = createContextPipeline({
      runCompact: runner,
      modelOverrides: [MODEL],
      sessionMemory: store,
      onEvent: (e) => events.push(e),
    });
    const over = [...grown, ...historyOf(7_500).slice(grown.length)];
    const result = await withEvents.autocompact(input(over));
    expect(result.boundaries).toHaveLength(1);
    expect(runner.requests).toHaveLength(1);
    expect(events.find((e) => e.type === "compact_succeeded")).toMatchObject({ source: "session_memory" });
  });
});
