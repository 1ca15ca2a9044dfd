import { describe, expect, it } from "vitest";
import type { SDKMessage } from "./messages.js";
import { ToolUseOrder } from "./tool-use-order.js";

const started = (id: string) =>
  ({ type: "system", subtype: "task_started", tool_use_id: id }) as unknown as SDKMessage;
const holder = (id: string) =>
  ({
    type: "assistant",
    parent_tool_use_id: null,
    message: { content: [{ type: "tool_use", id, name: "Agent", input: {} }] },
  }) as unknown as SDKMessage;
const subMessage = (id: string) =>
  ({ type: "assistant", parent_tool_use_id: id, message: { content: [] } }) as unknown as SDKMessage;

describe("R-K1: a fork's messages follow the assistant message that started it", () => {
  it("task_started and the sub-agent's messages are held until their tool_use's message is out", () => {
    const out: SDKMessage[] = [];
    const order = new ToolUseOrder((message) => out.push(message));
    order.emit(started("t1"));
    order.emit(subMessage("t1"));
    expect(out).toEqual([]);
    order.emit(holder("t1"));
    expect(out).toEqual([holder("t1"), started("t1"), subMessage("t1")]);
    order.emit(subMessage("t1"));
    expect(out).toHaveLength(4);
  });

  it("flush releases what a cut stream never completed", () => {
    const out: SDKMessage[] = [];
    const order = new ToolUseOrder((message) => out.push(message));
    order.emit(started("t2"));
    order.flush();
    expect(out).toEqual([started("t2")]);
  });
});
