import {
  type ContentBlockParam,
  estimateMessageTokens,
  type Message,
  type UserMessage,
} from "@forkloop/loop-core";
import {
  contentBlocks,
  indexToolUses,
  isHumanTurn,
  type MessageFactory,
  toolResultBlocks,
} from "./message-shape.js";
import { touchedPath } from "./microcompact.js";

/** A finished exchange: a human turn, its tool rounds, and the final tool-free answer. */
export interface CollapsibleSpan {
  /** Index of the human turn. */
  readonly start: number;
  /** Index of the final assistant answer (kept verbatim). */
  readonly end: number;
  /** Estimated tokens freed by replacing the rounds in between with a digest. */
  readonly tokensFreed: number;
  readonly digest: string;
}

const MAX_DIGEST_CALLS = 12;

/**
 * R-C3, pure: the finished exchanges before `tailStart`, oldest first. Only the tool rounds in the
 * middle are replaced; the request and the final answer stay (the answer unmodified, thinking
 * included), so the history keeps its user/assistant alternation with no orphaned tool_use.
 */
export function findCollapsibleSpans(
  messages: readonly Message[],
  tailStart: number,
): readonly CollapsibleSpan[] {
  const uses = indexToolUses(messages);
  const spans: CollapsibleSpan[] = [];
  let start = -1;
  for (let index = 0; index <= tailStart && index < messages.length; index++) {
    const message = messages[index]!;
    if (!isHumanTurn(message)) continue;
    if (start >= 0) {
      const span = spanBetween(messages, start, index, uses);
      if (span) spans.push(span);
    }
    start = index;
  }
  return spans;

  function spanBetween(
    all: readonly Message[],
    from: number,
    nextHuman: number,
    toolUses: ReturnType<typeof indexToolUses>,
  ): CollapsibleSpan | null {
    let end = nextHuman - 1;
    while (end > from && all[end]?.type === "system") end--;
    const final = all[end];
    if (final?.type !== "assistant" || final.apiError) return null;
    if (final.message.content.some((block) => block.type === "tool_use")) return null;
    if (end - from < 3) return null;
    let tokens = 0;
    const calls: string[] = [];
    for (let index = from + 1; index < end; index++) {
      const message = all[index]!;
      tokens += estimateMessageTokens(message);
      for (const result of toolResultBlocks(message)) {
        const use = toolUses.get(result.tool_use_id);
        const path = use ? touchedPath(use.input) : undefined;
        calls.push(`${use?.name ?? "tool"}${path ? ` ${path}` : ""}${result.is_error ? " (error)" : ""}`);
      }
    }
    const shown = calls.slice(0, MAX_DIGEST_CALLS).join(", ");
    const more = calls.length > MAX_DIGEST_CALLS ? ` and ${calls.length - MAX_DIGEST_CALLS} more` : "";
    const digest = `[Collapsed: ${end - from - 1} messages of earlier work with ${calls.length} tool calls: ${shown}${more}. The answer that followed is kept below.]`;
    return { start: from, end, tokensFreed: Math.max(0, tokens - Math.ceil(digest.length / 2)), digest };
  }
}

/** Replaces each span's middle with its digest, appended to the span's request message. */
export function applyCollapse(
  messages: readonly Message[],
  spans: readonly CollapsibleSpan[],
  factory: MessageFactory,
): readonly Message[] {
  if (spans.length === 0) return messages;
  const next: Message[] = [];
  let cursor = 0;
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    next.push(...messages.slice(cursor, span.start));
    const request = messages[span.start] as UserMessage;
    const content: ContentBlockParam[] = [...contentBlocks(request), { type: "text", text: span.digest }];
    next.push({ ...request, uuid: factory.uuid(), message: { role: "user", content } });
    next.push(messages[span.end]!);
    cursor = span.end + 1;
  }
  next.push(...messages.slice(cursor));
  return next;
}

/** Picks the oldest spans until `mustFree` tokens are freed; null if all of them are not enough. */
export function planCollapse(
  spans: readonly CollapsibleSpan[],
  mustFree: number,
): readonly CollapsibleSpan[] | null {
  const chosen: CollapsibleSpan[] = [];
  let freed = 0;
  for (const span of spans) {
    if (freed >= mustFree) break;
    chosen.push(span);
    freed += span.tokensFreed;
  }
  return freed >= mustFree ? chosen : null;
}
