import type { UserMessage } from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { CLEARED_TOOL_RESULT, clearToolResults, selectToolResultsToClear } from "./microcompact.js";
import { createHistory } from "./testing/index.js";

const big = (label: string) => `${label} `.repeat(200);

describe("selectToolResultsToClear", () => {
  it("R-C2: clears old tool results by tool_use_id, keeps the newest N", () => {
    const history = createHistory();
    history.user("refactor");
    const ids = Array.from(
      { length: 8 },
      (_, i) => history.toolCall("Bash", { command: `step ${i}` }, big(`out${i}`)).toolUseId,
    );
    history.answer("ok");
    const cleared = selectToolResultsToClear(history.messages, { keepRecent: 3 }).map((c) => c.toolUseId);
    expect(cleared).toEqual(ids.slice(0, 5));
  });

  it.each([
    ["a result the model has not answered yet", 0],
    ["a result about a file the newest assistant messages work on (pending Edit)", 1],
    ["an already cleared result", 2],
    ["a result marked as referenced", 3],
  ])("R-C2: never clears %s", (_name, scenario) => {
    const history = createHistory();
    history.user("fix the bug");
    const read = history.toolCall("Read", { file_path: "/src/a.ts" }, big("source"));
    const other = history.toolCall(
      "Bash",
      { command: "ls" },
      scenario === 2 ? CLEARED_TOOL_RESULT : big("listing"),
    );
    let target = other.toolUseId;
    if (scenario === 0) {
      target = history.toolCall("Bash", { command: "npm test" }, big("tests")).toolUseId;
      history.messages.pop(); // drop the result …
      const use = history.messages.pop()!; // … and re-add the pair with the result last (unanswered)
      history.messages.push(use);
      history.messages.push({
        type: "user",
        uuid: "late",
        parentUuid: use.uuid,
        timestamp: "",
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: target, content: big("tests") }],
        },
      });
    }
    if (scenario === 1) {
      target = read.toolUseId;
      history.toolCall("Edit", { file_path: "/src/a.ts", old_string: "a", new_string: "b" }, "edited");
    }
    const cleared = selectToolResultsToClear(history.messages, {
      keepRecent: 0,
      isReferenced: (id) => scenario === 3 && id === target,
    }).map((c) => c.toolUseId);
    expect(cleared).not.toContain(target);
  });

  it("R-C2: replaces content with placeholder text and never touches thinking blocks", () => {
    const history = createHistory();
    history.user("go");
    const first = history.toolCall("Read", { file_path: "/x" }, big("x"), {
      thinking: "I should read x first",
    });
    history.toolCall("Read", { file_path: "/y" }, big("y"), { thinking: "now y" });
    history.answer("done", { thinking: "all read" });
    const before = structuredClone(history.messages);
    const ids = new Set(
      selectToolResultsToClear(history.messages, { keepRecent: 1 }).map((c) => c.toolUseId),
    );
    expect([...ids]).toEqual([first.toolUseId]);
    const after = clearToolResults(history.messages, ids);
    const result = after.find((m) => m.uuid === first.result.uuid) as UserMessage;
    expect(result.message.content).toEqual([
      { type: "tool_result", tool_use_id: first.toolUseId, content: CLEARED_TOOL_RESULT },
    ]);
    after.forEach((message, index) => {
      if (message.type === "assistant") expect(message).toBe(history.messages[index]);
    });
    expect(history.messages).toEqual(before);
  });
});
