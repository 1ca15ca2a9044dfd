import { estimateMessageTokens, estimateTextTokens, type Message } from "@forkloop/loop-core";
import { isSafeCut, toolResultBlocks, toolResultText } from "./message-shape.js";
import { CLEARED_TOOL_RESULT } from "./microcompact.js";

/**
 * Where the protected tail starts: the index of the first message kept verbatim when everything
 * before it is replaced (by a summary or nothing). The tail is the newest messages that fit in
 * `maxTokens`, then moved forward to a safe cut — just before an assistant message — so a
 * tool_use is never separated from its tool_result and every kept thinking block, including the
 * latest assistant turn's, goes back unmodified (R-L12, R-L17). If even the newest assistant
 * message does not fit, the tail starts at it anyway (it is the minimum valid tail). Returns 0
 * when the history has no safe cut: nothing may be replaced.
 */
export function protectedTailStart(messages: readonly Message[], maxTokens: number): number {
  let start = messages.length;
  let tokens = 0;
  while (start > 0) {
    const next = tokens + estimateMessageTokens(messages[start - 1]!);
    if (next > maxTokens) break;
    tokens = next;
    start--;
  }
  if (start === 0) return 0;
  for (let index = start; index < messages.length; index++) if (isSafeCut(messages, index)) return index;
  for (let index = start - 1; index > 0; index--) if (isSafeCut(messages, index)) return index;
  return 0;
}

/** Below this many tokens a capped head is not worth keeping: the result is cleared instead. */
export const TAIL_RESULT_MIN_TOKENS = 100;

/** What a tool result of the protected tail says after compaction cut it (R-C4). */
function tailCutNotice(removedChars: number): string {
  return `\n\n[… ${removedChars} characters cut by compaction to fit the context window; run the tool again (e.g. on a smaller range) for the rest]`;
}

export interface ShrunkTail {
  readonly messages: readonly Message[];
  /** Estimated tokens removed from the tail (they are "replaced" too: the summary may cover them). */
  readonly tokensFreed: number;
  /** Results cut to their head plus a notice. */
  readonly cappedToolUseIds: readonly string[];
  /** Results whose share was under TAIL_RESULT_MIN_TOKENS: replaced by the placeholder. */
  readonly clearedToolUseIds: readonly string[];
}

/** Rounds of capping before the last resort (clear every tail result): notices cost a little. */
const SHRINK_ROUNDS = 3;

/**
 * R-C4, pure: makes a protected tail fit `maxTokens` when even the shortest valid tail (from the
 * newest assistant reply) does not — e.g. a 20k-token Read result the model has not answered yet.
 * Only tool_result contents change: the biggest results are cut first, all to one common level
 * (water-filling), each keeping its head plus a notice; a result whose share is under
 * TAIL_RESULT_MIN_TOKENS is replaced by the microcompact placeholder. Every tool_result block stays
 * (same tool_use_id, same is_error), so the tool_use/tool_result pairing is intact, and text and
 * thinking blocks are never touched (R-L12, R-L17). What remains over `maxTokens` (the tail's own
 * text) stays: the caller decides whether the compaction still gets under its line.
 */
export function shrinkProtectedTail(tail: readonly Message[], maxTokens: number): ShrunkTail {
  const before = sumMessageTokens(tail);
  let messages = tail;
  const capped = new Set<string>();
  const cleared = new Set<string>();
  for (let round = 0; round <= SHRINK_ROUNDS; round++) {
    const excess = sumMessageTokens(messages) - maxTokens;
    if (excess <= 0) break;
    const sizes = tailResultSizes(messages);
    if (sizes.size === 0) break;
    // The last round clears everything: a tail that caps cannot shrink enough holds no useful head.
    const level = round === SHRINK_ROUNDS ? 0 : waterLevel([...sizes.values()], excess);
    const cuts = new Map<string, number>();
    for (const [id, tokens] of sizes) if (tokens > level) cuts.set(id, level);
    if (cuts.size === 0) break;
    messages = messages.map((message) => cutResults(message, cuts, capped, cleared));
  }
  for (const id of cleared) capped.delete(id);
  return {
    messages,
    tokensFreed: before - sumMessageTokens(messages),
    cappedToolUseIds: [...capped],
    clearedToolUseIds: [...cleared],
  };
}

function sumMessageTokens(messages: readonly Message[]): number {
  let tokens = 0;
  for (const message of messages) tokens += estimateMessageTokens(message);
  return tokens;
}

/** Tokens of each tool result's text in the tail that can still shrink (not yet cleared). */
function tailResultSizes(messages: readonly Message[]): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const message of messages) {
    for (const block of toolResultBlocks(message)) {
      const text = toolResultText(block);
      if (text === CLEARED_TOOL_RESULT) continue;
      sizes.set(block.tool_use_id, estimateTextTokens(text));
    }
  }
  return sizes;
}

const NOTICE_PATTERN = /\n\n\[… (\d+) characters cut by compaction to fit the context window;[^\]]*\]$/;

function splitNotice(text: string): { readonly head: string; readonly removed: number } {
  const match = NOTICE_PATTERN.exec(text);
  if (!match) return { head: text, removed: 0 };
  return { head: text.slice(0, match.index), removed: Number(match[1]) };
}

/** Room a notice takes, so that a capped result plus its notice stays at its level. */
const NOTICE_TOKENS = estimateTextTokens(tailCutNotice(1_000_000));

/** The highest common cap so that cutting every result above it frees at least `excess`. */
export function waterLevel(sizes: readonly number[], excess: number): number {
  const sorted = [...sizes].sort((a, b) => b - a);
  let sum = 0;
  for (let k = 1; k <= sorted.length; k++) {
    sum += sorted[k - 1]!;
    const level = Math.floor((sum - excess) / k);
    const nextSize = sorted[k] ?? 0;
    if (level >= nextSize) return Math.max(0, level);
  }
  return 0;
}

function cutResults(
  message: Message,
  cuts: ReadonlyMap<string, number>,
  capped: Set<string>,
  cleared: Set<string>,
): Message {
  if (message.type !== "user" || typeof message.message.content === "string") return message;
  if (!message.message.content.some((b) => b.type === "tool_result" && cuts.has(b.tool_use_id)))
    return message;
  const content = message.message.content.map((block) => {
    if (block.type !== "tool_result") return block;
    const level = cuts.get(block.tool_use_id);
    if (level === undefined) return block;
    const keepTokens = level - NOTICE_TOKENS;
    if (keepTokens < TAIL_RESULT_MIN_TOKENS) {
      cleared.add(block.tool_use_id);
      return { ...block, content: CLEARED_TOOL_RESULT };
    }
    capped.add(block.tool_use_id);
    // A result cut in an earlier round is cut again from its original head, one notice in all.
    const { head, removed } = splitNotice(toolResultText(block));
    // Tokens grow about linearly with characters: keep that share of the text. Non-text parts
    // (images) go with the cut part; the notice says how much was cut.
    const keepChars = Math.floor((head.length * keepTokens) / Math.max(1, estimateTextTokens(head)));
    const kept = head.slice(0, Math.min(head.length, keepChars));
    return { ...block, content: kept + tailCutNotice(removed + head.length - kept.length) };
  });
  return { ...message, message: { ...message.message, content } };
}
