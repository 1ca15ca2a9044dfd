import { estimateMessageTokens, type Message } from "@forkloop/loop-core";
import { isSafeCut } from "./message-shape.js";

export interface SnipOptions {
  /** Current token count of the history (R-C8). */
  readonly tokens: number;
  /** Snip when `tokens` reaches this (default in the pipeline: the blocking limit, R-C7). */
  readonly triggerTokens: number;
  /** …and then drop until the estimate is below this. */
  readonly targetTokens: number;
  /** Snip when the history holds more messages than this… */
  readonly maxMessages: number;
  /** …down to this many, so the prefix (and the prompt cache) breaks once per batch, not per turn. */
  readonly targetMessages: number;
  /** First index of the protected tail (protectedTailStart): never snipped. */
  readonly tailStart: number;
}

export interface SnipPlan {
  /** The pinned first message (the task or the latest compact summary) stays at this index. */
  readonly pinnedIndex: number;
  /** Messages in [from, to) are dropped. */
  readonly from: number;
  readonly to: number;
  readonly tokensFreed: number;
}

/**
 * R-C1, pure: which messages to drop wholesale. The first user message is pinned (it is the task,
 * or after a compaction the summary that carries it); the dropped span ends just before an
 * assistant reply so no tool_use loses its tool_result. Null when nothing needs or can be dropped.
 */
export function planSnip(messages: readonly Message[], options: SnipOptions): SnipPlan | null {
  const overTokens = options.tokens >= options.triggerTokens;
  const overCount = messages.length > options.maxMessages;
  if (!overTokens && !overCount) return null;
  const pinnedIndex = messages.findIndex((message) => message.type === "user");
  if (pinnedIndex < 0) return null;
  const from = pinnedIndex + 1;
  const mustFree = overTokens ? options.tokens - options.targetTokens : 0;
  const mustDrop = overCount ? messages.length - options.targetMessages : 0;
  let freed = 0;
  let best: { readonly to: number; readonly freed: number } | null = null;
  for (let index = from; index <= options.tailStart && index < messages.length; index++) {
    if (index > from && isSafeCut(messages, index)) {
      best = { to: index, freed };
      if (freed >= mustFree && index - from >= mustDrop) break;
    }
    freed += estimateMessageTokens(messages[index]!);
  }
  if (best === null) return null;
  return { pinnedIndex, from, to: best.to, tokensFreed: best.freed };
}
