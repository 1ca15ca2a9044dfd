import type { Tool, UserMessage } from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createHistory } from "./testing/index.js";
import { applyToolResultBudget } from "./tool-result-budget.js";

function tool(name: string, maxResultSizeChars: number): Tool {
  return {
    name,
    description: name,
    inputSchema: z.object({}),
    isConcurrencySafe: () => true,
    isReadOnly: () => true,
    maxResultSizeChars,
    call: async () => ({ content: "" }),
  };
}

describe("applyToolResultBudget", () => {
  it("R-C0: caps each tool result to its tool's maxResultSizeChars; infinite caps are exempt", () => {
    const history = createHistory();
    history.user("go");
    const bash = history.toolCall("Bash", { command: "yes" }, "y\n".repeat(5_000));
    const read = history.toolCall("Read", { file_path: "/a" }, "x".repeat(50_000));
    const small = history.toolCall("Bash", { command: "true" }, "ok");
    const outcome = applyToolResultBudget(history.messages, [tool("Bash", 1_000), tool("Read", Infinity)]);

    const content = (message: UserMessage | undefined) =>
      (message?.message.content as { content: string }[] | undefined)?.[0]?.content ?? "";
    const byUuid = (uuid: string) => outcome.messages.find((m) => m.uuid === uuid) as UserMessage | undefined;
    expect(content(byUuid(bash.result.uuid)).startsWith("y\n".repeat(500))).toBe(true);
    expect(content(byUuid(bash.result.uuid))).toContain("9000 characters cut");
    expect(byUuid(read.result.uuid)).toBe(read.result);
    expect(byUuid(small.result.uuid)).toBe(small.result);
    expect(outcome.cappedToolUseIds).toEqual([bash.toolUseId]);
    expect(outcome.charsRemoved).toBe(9_000);
  });

  it("R-C0: a second pass is a no-op (the prefix, and so the prompt cache, stays stable)", () => {
    const history = createHistory();
    history.user("go");
    history.toolCall("Grep", { pattern: "x" }, "match\n".repeat(1_000));
    const tools = [tool("Grep", 500)];
    const once = applyToolResultBudget(history.messages, tools);
    const twice = applyToolResultBudget(once.messages, tools);
    expect(twice.messages).toBe(once.messages);
    expect(twice.charsRemoved).toBe(0);
  });
});
