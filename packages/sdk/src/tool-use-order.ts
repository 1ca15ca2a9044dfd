import type { SDKMessage } from "./messages.js";

/** The tool_use a message belongs to: a fork's task_* messages, a sub-agent's own messages. */
function toolUseOf(message: SDKMessage): string | undefined {
  if (message.type === "system" && "tool_use_id" in message && typeof message.tool_use_id === "string") {
    return message.tool_use_id;
  }
  if ((message.type === "assistant" || message.type === "user") && message.parent_tool_use_id !== null) {
    return message.parent_tool_use_id ?? undefined;
  }
  return undefined;
}

/**
 * Keeps the Agent SDK's order: the assistant message holding a tool_use comes before anything of
 * the fork it starts. A fork starts the moment its tool_use block has streamed (R-T2), before the
 * assistant message is complete, so its `task_started` (and its first messages) are held until
 * that message has been yielded. `flush()` releases what is still held (a stream cut before its
 * message was complete) before the turn's result.
 */
export class ToolUseOrder {
  readonly #push: (message: SDKMessage) => void;
  readonly #seen = new Set<string>();
  readonly #held = new Map<string, SDKMessage[]>();
  readonly #waiting = new Map<string, (() => void)[]>();

  constructor(push: (message: SDKMessage) => void) {
    this.#push = push;
  }

  /** `after`: the tool_use a message without a tool_use_id of its own belongs to (a task list's change). */
  emit(message: SDKMessage, after?: string): void {
    const toolUseId = after ?? toolUseOf(message);
    if (toolUseId !== undefined && !this.#seen.has(toolUseId)) {
      const held = this.#held.get(toolUseId) ?? [];
      held.push(message);
      this.#held.set(toolUseId, held);
      return;
    }
    this.#push(message);
    if (message.type !== "assistant") return;
    for (const block of message.message.content) {
      if (block.type !== "tool_use") continue;
      this.#seen.add(block.id);
      for (const resolve of this.#waiting.get(block.id) ?? []) resolve();
      this.#waiting.delete(block.id);
      const held = this.#held.get(block.id);
      this.#held.delete(block.id);
      for (const later of held ?? []) this.emit(later);
    }
  }

  flush(): void {
    const held = [...this.#held.values()].flat();
    this.#held.clear();
    for (const message of held) this.#push(message);
    for (const resolve of [...this.#waiting.values()].flat()) resolve();
    this.#waiting.clear();
  }

  /**
   * Resolves once the assistant message holding `toolUseId` has been yielded (or `flush()`
   * released everything): a hook about that tool call then comes after the message, as in the
   * Agent SDK (HookCallbacks lets the program take what was yielded before calling it).
   */
  async yielded(toolUseId: string): Promise<void> {
    if (this.#seen.has(toolUseId)) return;
    await new Promise<void>((resolve) => {
      const waiting = this.#waiting.get(toolUseId) ?? [];
      waiting.push(resolve);
      this.#waiting.set(toolUseId, waiting);
    });
  }
}
