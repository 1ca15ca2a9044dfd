import type { LoopRun, PhaseOutcome } from "./loop-run.js";
import type { LoopState } from "./loop-state.js";
import { step } from "./loop-step.js";
import type { AssistantMessage, Message } from "./messages.js";

/**
 * The reply stopped with `pause_turn` — the API paused a long-running server-tool turn
 * (web search, code execution). The turn has not ended: no stop hooks run.
 */
export function isPausedTurn(assistantMessages: readonly AssistantMessage[]): boolean {
  const last = assistantMessages.at(-1);
  return last !== undefined && !last.apiError && last.message.stop_reason === "pause_turn";
}

/**
 * The next request is this one with the paused reply appended as-is, which lets the model continue
 * (SDK 1.14's StopReason docs; the server-tools docs show it on 4.6+ models, where it is not a
 * prefill). `step` bounds the continuations, so a server that pauses forever ends the run.
 */
export function continuePausedTurn(input: {
  readonly run: LoopRun;
  readonly state: LoopState;
  /** The history with the paused reply last. */
  readonly messages: readonly Message[];
}): PhaseOutcome {
  const { run, state, messages } = input;
  const decision = step(state, { type: "paused" }, run.config);
  const turnCount = state.turnCount + 1;
  if (decision.type === "terminal") {
    // R-L19: max_turns counts the model call it refused.
    return {
      reason: decision.reason,
      messages,
      ...(decision.error ? { error: decision.error } : {}),
      ...(decision.reason === "max_turns" ? { turnCount } : {}),
    };
  }
  return {
    next: {
      ...state,
      messages,
      pauseTurnContinuations: state.pauseTurnContinuations + 1,
      turnCount,
      transition: { reason: "pause_turn_continuation" },
    },
  };
}
