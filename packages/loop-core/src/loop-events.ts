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

/** Everything `query()` yields. Messages are the transcript; the rest are events for UIs. */
export type LoopEvent =
  | Message
  | { readonly type: "stream_event"; readonly event: RawMessageStreamEvent }
  | { readonly type: "request_start"; readonly model: string; readonly querySource: string }
  | ApiRetryEvent
  /** R-L8: remove this already-yielded message (its attempt was abandoned). */
  | { readonly type: "tombstone"; readonly uuid: string }
  | { readonly type: "model_fallback"; readonly from: string; readonly to: string }
  | HistoryReplacedEvent
  | ToolUseSummaryEvent
  | StateSnapshotEvent;
