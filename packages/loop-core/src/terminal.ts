import type { Message } from "./messages.js";

/** Why the loop ended: exactly the 10 reasons of R-L6. */
export type TerminalReason =
  | "blocking_limit"
  | "image_error"
  | "model_error"
  | "aborted_streaming"
  | "prompt_too_long"
  | "completed"
  | "stop_hook_prevented"
  | "aborted_tools"
  | "hook_stopped"
  | "max_turns";

/**
 * Why the previous iteration continued: the 7 reasons of R-L7, and the API's `pause_turn`
 * (the server paused a server-tool turn; the loop sends it back to continue it).
 */
export type ContinueReason =
  | "collapse_drain_retry"
  | "reactive_compact_retry"
  | "max_output_tokens_escalate"
  | "max_output_tokens_recovery"
  | "stop_hook_blocking"
  | "token_budget_continuation"
  | "next_turn"
  | "pause_turn_continuation";

export const TERMINAL_REASONS: readonly TerminalReason[] = [
  "blocking_limit",
  "image_error",
  "model_error",
  "aborted_streaming",
  "prompt_too_long",
  "completed",
  "stop_hook_prevented",
  "aborted_tools",
  "hook_stopped",
  "max_turns",
];

export const CONTINUE_REASONS: readonly ContinueReason[] = [
  "collapse_drain_retry",
  "reactive_compact_retry",
  "max_output_tokens_escalate",
  "max_output_tokens_recovery",
  "stop_hook_blocking",
  "token_budget_continuation",
  "next_turn",
  "pause_turn_continuation",
];

/**
 * Cumulative token usage of a run: every API call the loop made, R-L18 tool-use summaries
 * included (not sub-agents', which report their own).
 */
export interface UsageTotals {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheCreationInputTokens: number;
  readonly cacheReadInputTokens: number;
  readonly apiCalls: number;
}

/** The value `query()` returns when its generator finishes. */
export interface Terminal {
  readonly reason: TerminalReason;
  readonly turnCount: number;
  /** The final history (what a resumed session continues from). */
  readonly messages: readonly Message[];
  readonly usage: UsageTotals;
  /** The part of `usage` spent on R-L18 tool-use summaries; absent when none ran. */
  readonly toolUseSummaryUsage?: UsageTotals;
  /** Present for error terminals: what went wrong, in words a user can act on. */
  readonly error?: { readonly type: string; readonly message: string; readonly status?: number | null };
}
