import { estimateMessageTokens, type Message } from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { toolResultBlocks, toolResultText } from "./message-shape.js";
import { CLEARED_TOOL_RESULT } from "./microcompact.js";
import { shrinkProtectedTail, TAIL_RESULT_MIN_TOKENS, waterLevel } from "./protected-tail.js";
import { createHistory } from "./testing/index.js";

const sum = (messages: readonly Message[]) => messages.reduce((n, m) => n + estimateMessageTokens(m), 0);

describe("shrinkProtectedTail (R-C4)", () => {
  it.each([
    // sizes, excess → the common cap
    { sizes: [1_000, 100], excess: 500, level: 500 },
    { sizes: [1_000, 900], excess: 500, level: 700 },
    { sizes: [300, 300, 300], excess: 300, level: 200 },
    { sizes: [100, 50], excess: 1_000, level: 0 },
    { sizes: [], excess: 10, level: 0 },
  ])(
    "R-C4: waterLevel($sizes, $excess) = $level (biggest results are cut first, to one level)",
    ({ sizes, excess, level }) => {
      expect(waterLevel(sizes, excess)).toBe(level);
    },
  );

  it("R-C4: a tail that fits is returned as is", () => {
    const history = createHistory();
    history.toolCall("Read", { file_path: "/a.md" }, "short\n");
    const shrunk = shrinkProtectedTail(history.messages, 10_000);
    expect(shrunk.messages).toBe(history.messages);
    expect(shrunk.tokensFreed).toBe(0);
  });

  it("R-C4: one huge tool result in the tail is cut to the budget; the pairing, is_error, text and thinking blocks stay", () => {
    const history = createHistory();
    history.toolCall("Bash", { command: "ls" }, "a.md\nb.md\n", { thinking: "list first" });
    const huge = history.toolCall("Read", { file_path: "/big.md" }, "line of the big file\n".repeat(4_000), {
      thinking: "now read the big file",
      isError: true,
    });
    const tail = history.messages;
    expect(sum(tail)).toBeGreaterThan(15_000);
    const shrunk = shrinkProtectedTail(tail, 2_000);

    expect(sum(shrunk.messages)).toBeLessThanOrEqual(2_000);
    expect(shrunk.tokensFreed).toBe(sum(tail) - sum(shrunk.messages));
    expect(shrunk.cappedToolUseIds).toEqual([huge.toolUseId]);
    expect(shrunk.clearedToolUseIds).toEqual([]);
    // Only the huge result changed: same message count, assistant messages identical objects.
    expect(shrunk.messages).toHaveLength(tail.length);
    tail.forEach((message, index) => {
      if (message.type === "assistant") expect(shrunk.messages[index]).toBe(message);
    });
    expect(shrunk.messages[1]).toBe(tail[1]);
    const [block] = toolResultBlocks(shrunk.messages[3]!);
    expect(block).toMatchObject({ tool_use_id: huge.toolUseId, is_error: true });
    const text = toolResultText(block!);
    expect(text.startsWith("line of the big file\n")).toBe(true);
    expect(text).toMatch(/\[… \d+ characters cut by compaction to fit the context window;/);
  });

  it("R-C4: cutting twice keeps one notice and counts every removed character", () => {
    const history = createHistory();
    history.toolCall("Read", { file_path: "/big.md" }, "x".repeat(40_000));
    const once = shrinkProtectedTail(history.messages, 3_000);
    const twice = shrinkProtectedTail(once.messages, 1_000);
    const text = toolResultText(toolResultBlocks(twice.messages[1]!)[0]!);
    expect(text.match(/characters cut by compaction/g)).toHaveLength(1);
    const removed = Number(/\[… (\d+) characters/.exec(text)![1]);
    expect(removed + text.indexOf("\n\n[…")).toBe(40_000);
  });

  it("R-C4: when the budget leaves a result less than the minimum, it is cleared with the placeholder", () => {
    const history = createHistory();
    history.toolCall("Read", { file_path: "/big.md" }, "word ".repeat(5_000));
    const shrunk = shrinkProtectedTail(history.messages, TAIL_RESULT_MIN_TOKENS);
    expect(shrunk.clearedToolUseIds).toHaveLength(1);
    expect(toolResultText(toolResultBlocks(shrunk.messages[1]!)[0]!)).toBe(CLEARED_TOOL_RESULT);
  });

  it("R-C4: a tail whose own text is over budget keeps its text: only results shrink", () => {
    const history = createHistory();
    const reply = history.answer("a long final answer. ".repeat(2_000));
    const shrunk = shrinkProtectedTail(history.messages, 500);
    expect(shrunk.messages[0]).toBe(reply);
    expect(shrunk.tokensFreed).toBe(0);
  });
});
