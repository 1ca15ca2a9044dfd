import type Anthropic from "@anthropic-ai/sdk";
import type { ThinkingConfigParam } from "./build-request.js";
import type { ContextEditingConfig } from "./context-editing.js";
import type { AutoCompactTracking } from "./context-pipeline.js";
import type { Message } from "./messages.js";
import type { ModelInfo } from "./model-catalog.js";
import type { BeforeSend, OutputConfig, RetryOptions } from "./model-client.js";
import type { ContinueReason } from "./terminal.js";
import type { BudgetTracker } from "./token-budget.js";
import type { ToolUseContext } from "./tool.js";
import type { ToolUseSummaryEvent } from "./tool-use-summary.js";

/** Why the previous iteration continued (R-L5); tests assert on `reason`. */
export interface Transition {
  readonly reason: ContinueReason;
  /** 1-based attempt of a repeated recovery (max_output_tokens_recovery). */
  readonly attempt?: number;
}

/**
 * R-L4: everything that changes between iterations, in one object. R-L5: it is never mutated;
 * every continue site builds a complete new state with its `transition`.
 */
export interface LoopState {
  readonly messages: readonly Message[];
  readonly toolUseContext: ToolUseContext;
  readonly autoCompactTracking: AutoCompactTracking;
  /** R-L10: continuations after an output cap, at most 3. */
  readonly maxOutputTokensRecoveryCount: number;
  /**
   * R-L10/R-L11: reactive compact runs once per withheld error kind (a compact that fixed a
   * prompt-too-long says nothing about an oversized image); kept across stop-hook retries.
   */
  readonly reactiveCompactAttempted: ReactiveCompactGuards;
  /** R-L10: the escalated output cap (64K) while recovering from a cut reply; cleared after. */
  readonly maxOutputTokensOverride: number | undefined;
  /** R-L18: summary of the previous iteration's tools, awaited during this one. */
  readonly pendingToolUseSummary: Promise<ToolUseSummaryEvent | null> | undefined;
  /** R-L15: this stop follows a retry caused by a blocking stop hook. */
  readonly stopHookActive: boolean;
  /** R-L15: the hooks that blocked last time; they are not re-run on that retry. */
  readonly blockedStopHooks: readonly number[];
  /** `pause_turn` replies of this turn continued so far, at most MAX_PAUSE_TURN_CONTINUATIONS. */
  readonly pauseTurnContinuations: number;
  /** 1 on the first model call; compared with maxTurns (R-L19). */
  readonly turnCount: number;
  /** R-L14 token-budget continuations so far. */
  readonly budgetTracker: BudgetTracker;
  readonly transition: Transition | undefined;
}

/** One-shot reactive-compact guards, one per error kind that reactive compact answers. */
export interface ReactiveCompactGuards {
  readonly prompt_too_long: boolean;
  readonly media: boolean;
}

export const NO_REACTIVE_COMPACT_ATTEMPTED: ReactiveCompactGuards = Object.freeze({
  prompt_too_long: false,
  media: false,
});

/** The LoopState fields that start afresh with every new model turn. */
export type TurnFields = Pick<
  LoopState,
  | "maxOutputTokensRecoveryCount"
  | "maxOutputTokensOverride"
  | "reactiveCompactAttempted"
  | "pendingToolUseSummary"
  | "stopHookActive"
  | "blockedStopHooks"
  | "pauseTurnContinuations"
>;

/**
 * R-L5: the reset fields of a new turn, in one place — no output-cap recovery under way and no
 * escalated cap (R-L10), fresh reactive-compact guards, no summary started (R-L18), no stop-hook
 * retry (R-L15). A stop-hook retry overrides the guards: they are kept across it (R-L11).
 */
export function freshTurnState(): TurnFields {
  return {
    maxOutputTokensRecoveryCount: 0,
    maxOutputTokensOverride: undefined,
    reactiveCompactAttempted: NO_REACTIVE_COMPACT_ATTEMPTED,
    pendingToolUseSummary: undefined,
    stopHookActive: false,
    blockedStopHooks: [],
    pauseTurnContinuations: 0,
  };
}

/** R-L2: a command queued while the loop runs (slash command, task notification, user prompt). */
export interface QueuedCommand {
  readonly uuid: string;
  readonly content: string;
  readonly kind: "prompt" | "slash_command" | "task_notification";
  /** Called with `started` when the loop consumes it, `completed` when the query returns normally. */
  readonly onStatus?: (status: "started" | "completed") => void;
}

/**
 * R-L13: the immutable configuration, captured once on the first `.next()` and never re-read —
 * a change to the caller's params object during a run has no effect on it.
 */
export interface QueryConfig {
  readonly querySource: string;
  readonly isSubAgent: boolean;
  readonly client: Anthropic | undefined;
  readonly maxTurns: number | undefined;
  readonly defaultMaxOutputTokens: number;
  readonly escalatedMaxOutputTokens: number;
  readonly fallbackModels: readonly string[];
  readonly thinking: ThinkingConfigParam | undefined;
  readonly tokenBudget: number | undefined;
  readonly taskBudget: { readonly total: number } | undefined;
  readonly autoCompactEnabled: boolean;
  /** R-C7: the run's window cap (optional so existing configs stay valid). */
  readonly autoCompactWindow?: number | undefined;
  readonly modelOverrides: readonly ModelInfo[];
  readonly streamingToolExecution: boolean;
  readonly toolUseSummaryModel: string | undefined;
  readonly recordSnapshots: boolean;
  readonly retry: RetryOptions | undefined;
  /** R-B1 (optional so existing configs stay valid). */
  readonly beforeSend?: BeforeSend | undefined;
  /** R-C2 cached variant: API context editing (optional so existing configs stay valid). */
  readonly contextEditing?: ContextEditingConfig | undefined;
  /** `output_config.effort` / `.format` of every request (optional so existing configs stay valid). */
  readonly outputConfig?: OutputConfig | undefined;
}

/** R-L10 constants (seed). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 8_000;
export const ESCALATED_MAX_OUTPUT_TOKENS = 64_000;
export const MAX_OUTPUT_TOKENS_RECOVERY_LIMIT = 3;

/**
 * `pause_turn` continuations of one turn before the loop gives up on a server that
 * pauses forever (terminal `model_error`, error type `pause_turn_limit`).
 */
export const MAX_PAUSE_TURN_CONTINUATIONS = 10;

/** Reason passed to `abort()` by a submit-interrupt (the user typed a new message, R-L16). */
export const SUBMIT_INTERRUPT_REASON = "interrupt";
