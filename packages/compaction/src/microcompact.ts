import { estimateTextTokens, type Message, type ToolResultBlockParam } from "@forkloop/loop-core";
import { indexToolUses, type ToolUseInfo, toolResultBlocks, toolResultText } from "./message-shape.js";

/** What a cleared result says instead of its content (the API's clear_tool_uses does the same). */
export const CLEARED_TOOL_RESULT = "[Old tool result content cleared]";

export interface ClearSelectionOptions {
  /** The newest N tool results are always kept. */
  readonly keepRecent: number;
  /** Extra "still needed" rule (e.g. results a todo item points at). */
  readonly isReferenced?: (toolUseId: string, use: ToolUseInfo | undefined) => boolean;
}

export interface ClearCandidate {
  readonly toolUseId: string;
  readonly tokens: number;
}

/** The file a tool call touched, if its input names one (Read/Write/Edit/LS/Grep conventions). */
export function touchedPath(input: Record<string, unknown>): string | undefined {
  for (const key of ["file_path", "path", "notebook_path"]) {
    const value = input[key];
    if (typeof value === "string" && value.length > 0) return value;
  }
  return undefined;
}

/** How many of the newest assistant messages count as "work in flight". */
const IN_FLIGHT_ASSISTANT_MESSAGES = 2;

/**
 * Files the newest assistant messages operate on. An older result about such a file is still
 * referenced by pending work: the Edit being made was written from that Read.
 */
function inFlightPaths(messages: readonly Message[], uses: ReadonlyMap<string, ToolUseInfo>): Set<string> {
  const recent = new Set<number>();
  for (let index = messages.length - 1; index >= 0 && recent.size < IN_FLIGHT_ASSISTANT_MESSAGES; index--) {
    if (messages[index]?.type === "assistant") recent.add(index);
  }
  const paths = new Set<string>();
  for (const use of uses.values()) {
    const path = touchedPath(use.input);
    if (path !== undefined && recent.has(use.messageIndex)) paths.add(path);
  }
  return paths;
}

/**
 * R-C2, pure: which tool results to clear, oldest first. Kept: the newest `keepRecent`; results
 * the model has not answered yet (after the last assistant message); results still referenced by
 * pending work — a file that one of the newest assistant messages operates on again (its Read is
 * what a pending Edit's old_string was copied from) or whatever `isReferenced` says; results already
 * cleared. Only tool_result blocks are ever candidates, so thinking blocks are never touched (R-L17).
 */
export function selectToolResultsToClear(
  messages: readonly Message[],
  options: ClearSelectionOptions,
): readonly ClearCandidate[] {
  const uses = indexToolUses(messages);
  let lastAssistant = -1;
  for (let index = messages.length - 1; index >= 0; index--) {
    if (messages[index]?.type === "assistant") {
      lastAssistant = index;
      break;
    }
  }
  const inFlight = inFlightPaths(messages, uses);
  const results: { readonly block: ToolResultBlockParam; readonly messageIndex: number }[] = [];
  messages.forEach((message, messageIndex) => {
    for (const block of toolResultBlocks(message)) results.push({ block, messageIndex });
  });
  const candidates: ClearCandidate[] = [];
  const oldEnough = results.slice(0, Math.max(0, results.length - options.keepRecent));
  for (const { block, messageIndex } of oldEnough) {
    if (messageIndex > lastAssistant) continue;
    const text = toolResultText(block);
    if (text === CLEARED_TOOL_RESULT) continue;
    const use = uses.get(block.tool_use_id);
    const path = use === undefined ? undefined : touchedPath(use.input);
    if (path !== undefined && inFlight.has(path)) continue;
    if (options.isReferenced?.(block.tool_use_id, use)) continue;
    const tokens = estimateTextTokens(text) - estimateTextTokens(CLEARED_TOOL_RESULT);
    if (tokens <= 0) continue;
    candidates.push({ toolUseId: block.tool_use_id, tokens });
  }
  return candidates;
}

/** Replaces the content of the chosen tool results with the placeholder; nothing else changes. */
export function clearToolResults(
  messages: readonly Message[],
  toolUseIds: ReadonlySet<string>,
): readonly Message[] {
  if (toolUseIds.size === 0) return messages;
  return messages.map((message) => {
    if (message.type !== "user" || typeof message.message.content === "string") return message;
    if (!message.message.content.some((b) => b.type === "tool_result" && toolUseIds.has(b.tool_use_id))) {
      return message;
    }
    const content = message.message.content.map((block) =>
      block.type === "tool_result" && toolUseIds.has(block.tool_use_id)
        ? { ...block, content: CLEARED_TOOL_RESULT }
        : block,
    );
    return { ...message, message: { ...message.message, content } };
  });
}
