import type { Message, Tool, ToolResultBlockParam } from "@forkloop/loop-core";
import { indexToolUses } from "./message-shape.js";

export interface ToolResultBudgetOutcome {
  readonly messages: readonly Message[];
  /** Characters removed, summed over every capped result. */
  readonly charsRemoved: number;
  readonly cappedToolUseIds: readonly string[];
}

function truncationNotice(removed: number): string {
  return `\n\n[… ${removed} characters cut: the tool result exceeded its size limit]`;
}

/**
 * R-C0: cap every tool_result to its tool's `maxResultSizeChars` before anything else runs, so one
 * huge Bash or Grep output cannot fill the window by itself. Tools with an infinite cap are exempt
 * (R-T3); results of unknown tools are left alone (the executor already answered them with an
 * error). Already-capped results come out unchanged, so a second pass is a no-op and the prompt
 * cache prefix stays stable.
 */
export function applyToolResultBudget(
  messages: readonly Message[],
  tools: readonly Tool[],
): ToolResultBudgetOutcome {
  const limits = new Map<string, number>();
  for (const tool of tools) {
    if (!Number.isFinite(tool.maxResultSizeChars)) continue;
    limits.set(tool.name, tool.maxResultSizeChars);
    for (const alias of tool.aliases ?? []) limits.set(alias, tool.maxResultSizeChars);
  }
  if (limits.size === 0) return { messages, charsRemoved: 0, cappedToolUseIds: [] };
  const uses = indexToolUses(messages);
  let charsRemoved = 0;
  const capped: string[] = [];
  const next = messages.map((message) => {
    if (message.type !== "user" || typeof message.message.content === "string") return message;
    let changed = false;
    const content = message.message.content.map((block) => {
      if (block.type !== "tool_result") return block;
      const name = uses.get(block.tool_use_id)?.name;
      const limit = name === undefined ? undefined : limits.get(name);
      if (limit === undefined) return block;
      const result = capToolResult(block, limit);
      if (result.removed === 0) return block;
      changed = true;
      charsRemoved += result.removed;
      capped.push(block.tool_use_id);
      return result.block;
    });
    return changed ? { ...message, message: { ...message.message, content } } : message;
  });
  return { messages: capped.length === 0 ? messages : next, charsRemoved, cappedToolUseIds: capped };
}

function capToolResult(
  block: ToolResultBlockParam,
  limit: number,
): { readonly block: ToolResultBlockParam; readonly removed: number } {
  if (typeof block.content === "string") {
    const cut = capText(block.content, limit);
    return cut.removed === 0
      ? { block, removed: 0 }
      : { block: { ...block, content: cut.text }, removed: cut.removed };
  }
  if (block.content === undefined) return { block, removed: 0 };
  // Text parts share one budget in order; images and documents are left as they are.
  let budget = limit;
  let removed = 0;
  const parts = block.content.map((part) => {
    if (part.type !== "text") return part;
    const cut = capText(part.text, Math.max(0, budget));
    budget -= part.text.length;
    removed += cut.removed;
    return cut.removed === 0 ? part : { ...part, text: cut.text };
  });
  return removed === 0 ? { block, removed: 0 } : { block: { ...block, content: parts }, removed };
}

const NOTICE_PATTERN = /\n\n\[… \d+ characters cut: the tool result exceeded its size limit\]$/;

function capText(text: string, limit: number): { readonly text: string; readonly removed: number } {
  if (text.length <= limit || NOTICE_PATTERN.test(text)) return { text, removed: 0 };
  const removed = text.length - limit;
  return { text: text.slice(0, limit) + truncationNotice(removed), removed };
}
