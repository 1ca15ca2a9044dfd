import type { Message } from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { toolResultBlocks } from "./message-shape.js";
import { protectedTailStart } from "./protected-tail.js";
import { planSnip } from "./snip.js";
import { createHistory } from "./testing/index.js";

function longSession(rounds: number): Message[] {
  const history = createHistory();
  history.user("TASK: port the parser to the new AST");
  for (let i = 0; i < rounds; i++)
    history.toolCall("Read", { file_path: `/src/f${i}.ts` }, `content ${i} `.repeat(40));
  history.answer("done");
  return history.messages;
}

function expectValidAfterSnip(messages: readonly Message[], plan: { from: number; to: number }): void {
  const kept = [...messages.slice(0, plan.from), ...messages.slice(plan.to)];
  const uses = new Set<string>();
  for (const message of kept) {
    if (message.type === "assistant") {
      for (const block of message.message.content) if (block.type === "tool_use") uses.add(block.id);
    }
    for (const result of toolResultBlocks(message)) expect(uses.has(result.tool_use_id)).toBe(true);
  }
  expect(kept[plan.from]?.type).toBe("assistant");
}

describe("planSnip", () => {
  const base = {
    triggerTokens: Infinity,
    targetTokens: 0,
    maxMessages: Infinity,
    targetMessages: 0,
  } as const;

  it.each([
    ["under both limits", { tokens: 1_000 }, false],
    ["over the token trigger", { tokens: 9_000, triggerTokens: 8_000, targetTokens: 4_000 }, true],
    ["over the message cap", { tokens: 1_000, maxMessages: 50, targetMessages: 40 }, true],
  ] as const)("R-C1: %s", (_name, options, expected) => {
    const messages = longSession(40);
    const plan = planSnip(messages, { ...base, ...options, tailStart: protectedTailStart(messages, 300) });
    expect(plan !== null).toBe(expected);
  });

  it("R-C1: drops old messages wholesale, pins the task, never splits a tool_use from its result", () => {
    const messages = longSession(40);
    const tailStart = protectedTailStart(messages, 300);
    const plan = planSnip(messages, {
      ...base,
      tokens: 1_000,
      maxMessages: 50,
      targetMessages: 40,
      tailStart,
    })!;
    expect(plan.pinnedIndex).toBe(0);
    expect(plan.from).toBe(1);
    expect(messages.length - (plan.to - plan.from)).toBeLessThanOrEqual(40);
    expect(plan.to).toBeLessThanOrEqual(tailStart);
    expect(plan.tokensFreed).toBeGreaterThan(0);
    expectValidAfterSnip(messages, plan);
  });

  it("R-C1: frees enough tokens to reach the target, and reports them", () => {
    const messages = longSession(40);
    const plan = planSnip(messages, {
      ...base,
      tokens: 12_000,
      triggerTokens: 10_000,
      targetTokens: 8_000,
      tailStart: protectedTailStart(messages, 300),
    })!;
    expect(plan.tokensFreed).toBeGreaterThanOrEqual(4_000);
    expectValidAfterSnip(messages, plan);
  });

  it("R-C1: never reaches into the protected tail", () => {
    const messages = longSession(10);
    const plan = planSnip(messages, {
      ...base,
      tokens: 1e9,
      triggerTokens: 1,
      targetTokens: 0,
      tailStart: 1,
    });
    expect(plan).toBeNull();
  });
});
