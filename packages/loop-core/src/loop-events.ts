import type { CacheSafeParams } from "./cache-safe-params.js";
import type { ReactiveCompactGuards } from "./loop-state.js";
import type { Message, RawMessageStreamEvent } from "./messages.js";
import type { ApiRetryEvent } from "./model-client.js";
import type { ContinueReason } from "./terminal.js";
import type { ToolUseSummaryEvent } from "./tool-use-summary.js";

/** Per-iteration snapshot of the loop state (R-L5 traceability), when `recordSnapshots` is on. */
export interface StateSnapshotEvent {
  readonly type: "state_snapshot";
  readonly turnCount: number;
  readonly transition: ContinueReason | undefined;
  readonly messageCount: number;
  readonly model: string;
  readonly maxOutputTokensOverride: number | undefined;
  readonly maxOutputTokensRecoveryCount: number;
  /** True once either reactive-compact guard is used (see `reactiveCompactAttempted`). */
  readonly hasAttemptedReactiveCompact: boolean;
  readonly reactiveCompactAttempted: ReactiveCompactGuards;
  readonly stopHookActive: boolean;
  readonly autoCompactFailures: number;
}

/**
 * A context stage (§4: snip, microcompact, collapse, compaction, reactive compact) replaced the
 * history: the loop continues from `messages`. Yielded at once, before the request that uses
 * them, so a transcript records the compacted history even if that request fails or is
 * interrupted (a resume then starts from the summary, not from the history it replaced).
 */
export interface HistoryReplacedEvent {
  readonly type: "history_replaced";
  readonly messages: readonly Message[];
}

/**
 * A model request is about to be sent (once per attempt: a fallback's attempt is a request of its
 * own; the client's retries of one attempt are not).
 */
export interface RequestStartEvent {
  readonly type: "request_start";
  readonly model: string;
  readonly querySource: string;
  /**
   * R-F3: the request's exact prefix — system blocks and tool definitions as sent, its model,
   * thinking and output cap — with the messages it sends. The one place a request prefix is
   * announced: a session keeps the last one it saw, and its forks start from those bytes.
   */
  readonly prefix: CacheSafeParams;
}

/** Everything `query()` yields. Messages are the transcript; the rest are events for UIs. */
export type LoopEvent =
  | Message
  | {
      readonly type: "stream_event";
      readonly event: RawMessageStreamEvent;
      /** The response's `request-id`, as the finished message's `requestId` (R-K2). */
      readonly requestId?: string;
    }
  | RequestStartEvent
  | ApiRetryEvent
  /** R-L8: remove this already-yielded message (its attempt was abandoned). */
  | { readonly type: "tombstone"; readonly uuid: string }
  | { readonly type: "model_fallback"; readonly from: string; readonly to: string }
  | HistoryReplacedEvent
  | ToolUseSummaryEvent
  | StateSnapshotEvent;
