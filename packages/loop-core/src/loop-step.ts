import type { WithheldKind } from "./api-error-kinds.js";
import { type LoopState, MAX_OUTPUT_TOKENS_RECOVERY_LIMIT, type QueryConfig } from "./loop-state.js";
import type { ContinueReason, TerminalReason } from "./terminal.js";

/**
 * How an iteration's reply ended, once its effects are known: the stop hooks have run, the token
 * budget was checked, the tools answered. `step` turns it into the next transition or a terminal.
 */
export type StepEvent =
  /**
   * R-L9: a withheld reply. `failed` lists recoveries already tried for it in this iteration that
   * could not help (the pipeline had nothing to drain, or reactive compact returned null).
   */
  | { readonly type: "withheld"; readonly kind: WithheldKind; readonly failed?: readonly ContinueReason[] }
  /** The reply ended without tool calls (R-L15 stop hooks, then the R-L14 budget). */
  | {
      readonly type: "end_turn";
      readonly preventContinuation: boolean;
      readonly stopHookBlocking: boolean;
      readonly budgetContinues: boolean;
    }
  /** Every tool call of the reply has its result; `hookStopped`: a hook said continue:false. */
  | { readonly type: "tools_done"; readonly hookStopped: boolean };

export type StepDecision =
  | { readonly type: "continue"; readonly reason: ContinueReason }
  | { readonly type: "terminal"; readonly reason: TerminalReason };

export type StepState = Pick<
  LoopState,
  | "transition"
  | "reactiveCompactAttempted"
  | "maxOutputTokensOverride"
  | "maxOutputTokensRecoveryCount"
  | "turnCount"
>;
export type StepConfig = Pick<
  QueryConfig,
  "maxTurns" | "defaultMaxOutputTokens" | "escalatedMaxOutputTokens"
>;

/**
 * R-L13: the continue decision as a pure function — the single source of truth `query()` asks
 * at every branch after the model call. It reads the state, never changes it; query.ts builds the
 * next LoopState for the transition it returns (R-L5).
 */
export function step(state: StepState, event: StepEvent, config: StepConfig): StepDecision {
  switch (event.type) {
    case "withheld":
      return recover(state, event.kind, event.failed ?? [], config);
    case "end_turn":
      if (event.preventContinuation) return terminal("stop_hook_prevented");
      if (event.stopHookBlocking) return proceed("stop_hook_blocking");
      if (event.budgetContinues) return proceed("token_budget_continuation");
      return terminal("completed");
    case "tools_done":
      if (event.hookStopped) return terminal("hook_stopped");
      // R-L19: turnCount + 1 is the model call the next iteration would make.
      if (config.maxTurns !== undefined && state.turnCount + 1 > config.maxTurns)
        return terminal("max_turns");
      return proceed("next_turn");
  }
}

/**
 * R-L10, weakest rung first. Prompt too long: drain staged collapses (not twice in a row) →
 * reactive compact → surface. Media error: reactive compact → surface. Each kind has its own
 * one-shot reactive-compact guard (R-L11). Output cap: raise 8K → 64K once → up to 3 "continue"
 * prompts → surface as model_error.
 */
function recover(
  state: StepState,
  kind: WithheldKind,
  failed: readonly ContinueReason[],
  config: StepConfig,
): StepDecision {
  if (kind === "max_output_tokens") {
    if (
      state.maxOutputTokensOverride === undefined &&
      config.defaultMaxOutputTokens < config.escalatedMaxOutputTokens
    ) {
      return proceed("max_output_tokens_escalate");
    }
    if (state.maxOutputTokensRecoveryCount < MAX_OUTPUT_TOKENS_RECOVERY_LIMIT) {
      return proceed("max_output_tokens_recovery");
    }
    return terminal("model_error");
  }
  if (
    kind === "prompt_too_long" &&
    state.transition?.reason !== "collapse_drain_retry" &&
    !failed.includes("collapse_drain_retry")
  ) {
    return proceed("collapse_drain_retry");
  }
  if (!state.reactiveCompactAttempted[kind] && !failed.includes("reactive_compact_retry")) {
    return proceed("reactive_compact_retry");
  }
  return terminal(kind === "prompt_too_long" ? "prompt_too_long" : "image_error");
}

function proceed(reason: ContinueReason): StepDecision {
  return { type: "continue", reason };
}

function terminal(reason: TerminalReason): StepDecision {
  return { type: "terminal", reason };
}
