import type { WithheldKind } from "./api-error-kinds.js";
import {
  type LoopState,
  MAX_OUTPUT_TOKENS_RECOVERY_LIMIT,
  MAX_PAUSE_TURN_CONTINUATIONS,
  type QueryConfig,
} from "./loop-state.js";
import type { StopHooksResult } from "./stop-hooks.js";
import type { ContinueReason, Terminal, TerminalReason } from "./terminal.js";
import type { BudgetDecision, BudgetTracker } from "./token-budget.js";

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
  /** The reply ended without tool calls: what the R-L15 stop hooks said, then the R-L14 budget. */
  | { readonly type: "end_turn"; readonly stop: StopHooksResult; readonly budget: BudgetDecision }
  /** Every tool call of the reply has its result; `hookStop`: a hook said continue:false. */
  | { readonly type: "tools_done"; readonly hookStop: { readonly reason: string } | undefined }
  /** The reply stopped with `pause_turn` (and no client tool calls): not a finished turn. */
  | { readonly type: "paused" };

/**
 * The decision, with what the loop needs to carry it out: the feedback a blocking stop hook
 * gave, the budget nudge and its tracker, the error a stopping hook ends the loop with.
 */
export type StepDecision =
  | {
      readonly type: "continue";
      readonly reason: "stop_hook_blocking";
      /** The user message the model gets (R-L15). */
      readonly feedback: string;
      /** Not re-run on the retry this causes. */
      readonly blockingHooks: readonly number[];
    }
  | {
      readonly type: "continue";
      readonly reason: "token_budget_continuation";
      readonly nudge: string;
      readonly tracker: BudgetTracker;
    }
  | {
      readonly type: "continue";
      readonly reason: Exclude<ContinueReason, "stop_hook_blocking" | "token_budget_continuation">;
    }
  | {
      readonly type: "terminal";
      readonly reason: "stop_hook_prevented" | "hook_stopped";
      readonly error: NonNullable<Terminal["error"]>;
    }
  | {
      readonly type: "terminal";
      readonly reason: Exclude<TerminalReason, "stop_hook_prevented" | "hook_stopped">;
      /** Why a server's endless pauses ended the run (`pause_turn_limit`). */
      readonly error?: NonNullable<Terminal["error"]>;
    };

export type StepState = Pick<
  LoopState,
  | "transition"
  | "reactiveCompactAttempted"
  | "maxOutputTokensOverride"
  | "maxOutputTokensRecoveryCount"
  | "turnCount"
  | "pauseTurnContinuations"
>;
export type StepConfig = Pick<
  QueryConfig,
  "maxTurns" | "defaultMaxOutputTokens" | "escalatedMaxOutputTokens"
>;

/**
 * R-L13: the continue decision as a pure function — the single source of truth `query()` asks
 * at every branch after the model call. It reads the state, never changes it; query.ts builds the
 * next LoopState for the transition it returns (R-L5), from the payload the decision carries.
 */
export function step(state: StepState, event: StepEvent, config: StepConfig): StepDecision {
  switch (event.type) {
    case "withheld":
      return recover(state, event.kind, event.failed ?? [], config);
    case "end_turn": {
      const { stop, budget } = event;
      if (stop.preventContinuation) {
        return {
          type: "terminal",
          reason: "stop_hook_prevented",
          error: {
            type: "stop_hook_prevented",
            message: stop.stopReason ?? "A stop hook prevented continuation",
          },
        };
      }
      if (stop.blockingErrors.length > 0) {
        return {
          type: "continue",
          reason: "stop_hook_blocking",
          feedback: `Stop hook feedback:\n${stop.blockingErrors.join("\n")}`,
          blockingHooks: stop.blockingHooks,
        };
      }
      if (budget.action === "continue") {
        return {
          type: "continue",
          reason: "token_budget_continuation",
          nudge: budget.nudge,
          tracker: budget.tracker,
        };
      }
      return terminal("completed");
    }
    case "tools_done":
      if (event.hookStop) {
        return {
          type: "terminal",
          reason: "hook_stopped",
          error: { type: "hook_stopped", message: event.hookStop.reason },
        };
      }
      if (overMaxTurns(state, config)) return terminal("max_turns");
      return proceed("next_turn");
    case "paused":
      // The paused turn is sent back to continue it (no stop hooks: it has not ended),
      // a bounded number of times, each a model call that maxTurns counts.
      if (state.pauseTurnContinuations >= MAX_PAUSE_TURN_CONTINUATIONS) {
        return {
          type: "terminal",
          reason: "model_error",
          error: {
            type: "pause_turn_limit",
            message: `The server paused the turn (stop_reason pause_turn) ${MAX_PAUSE_TURN_CONTINUATIONS + 1} times in a row; stopped after ${MAX_PAUSE_TURN_CONTINUATIONS} continuations`,
          },
        };
      }
      if (overMaxTurns(state, config)) return terminal("max_turns");
      return proceed("pause_turn_continuation");
  }
}

/** R-L19: turnCount + 1 is the model call the next iteration would make. */
function overMaxTurns(state: StepState, config: StepConfig): boolean {
  return config.maxTurns !== undefined && state.turnCount + 1 > config.maxTurns;
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

function proceed(
  reason: Exclude<ContinueReason, "stop_hook_blocking" | "token_budget_continuation">,
): StepDecision {
  return { type: "continue", reason };
}

function terminal(reason: Exclude<TerminalReason, "stop_hook_prevented" | "hook_stopped">): StepDecision {
  return { type: "terminal", reason };
}
