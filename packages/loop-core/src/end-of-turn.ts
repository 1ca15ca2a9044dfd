import { createUserMessage } from "./create-message.js";
import type { LoopEvent } from "./loop-events.js";
import { lastUuid } from "./loop-messages.js";
import type { LoopRun, PhaseOutcome } from "./loop-run.js";
import { freshTurnState, type LoopState } from "./loop-state.js";
import { step } from "./loop-step.js";
import type { AssistantMessage, Message } from "./messages.js";
import { runStopHooks } from "./stop-hooks.js";
import type { Terminal } from "./terminal.js";
import { checkTokenBudget } from "./token-budget.js";

/**
 * R-L11: a reply that is an API error (or no reply at all) ends the loop as `model_error` — never
 * the stop hooks (error → hook blocks → retry → error …). Undefined for a real reply.
 */
export function failedReply(
  assistantMessages: readonly AssistantMessage[],
): NonNullable<Terminal["error"]> | undefined {
  const last = assistantMessages.at(-1);
  if (last && !last.apiError) return undefined;
  return last?.apiError ?? { status: null, type: "empty_response", message: "The model returned no message" };
}

/**
 * Phase 6 for a reply without tool calls (§1.2 "end_turn → done path"): the R-L15 stop hooks (a
 * hook that blocked is not re-run on the retry it caused), then the R-L14 token budget; `step`
 * decides and its decision carries the feedback or the nudge the next iteration starts with.
 */
export async function* endTurn(input: {
  readonly run: LoopRun;
  /** The iteration's state with its context and tracking applied. */
  readonly state: LoopState;
  readonly messages: readonly Message[];
}): AsyncGenerator<LoopEvent, PhaseOutcome> {
  const { run, state, messages } = input;
  const stop = await runStopHooks(run.hooks?.stop ?? [], {
    messages,
    stopHookActive: state.stopHookActive,
    context: state.toolUseContext,
    skip: state.stopHookActive ? state.blockedStopHooks : [],
  });
  const budget = checkTokenBudget({
    tracker: state.budgetTracker,
    isSubAgent: run.config.isSubAgent,
    budget: run.config.tokenBudget,
    turnTokens: run.usage.outputTokens,
  });
  const decision = step(state, { type: "end_turn", stop, budget }, run.config);
  switch (decision.reason) {
    case "stop_hook_blocking": {
      const feedback = yield* metaMessage(run, decision.feedback, messages);
      return {
        next: {
          ...state,
          ...freshTurnState(),
          messages: [...messages, feedback],
          // R-L11: the reactive-compact guards are carried over, not reset, on this retry.
          reactiveCompactAttempted: state.reactiveCompactAttempted,
          stopHookActive: true,
          blockedStopHooks: decision.blockingHooks,
          transition: { reason: "stop_hook_blocking" },
        },
      };
    }
    case "token_budget_continuation": {
      const nudge = yield* metaMessage(run, decision.nudge, messages);
      return {
        next: {
          ...state,
          ...freshTurnState(),
          messages: [...messages, nudge],
          budgetTracker: decision.tracker,
          transition: { reason: "token_budget_continuation" },
        },
      };
    }
    case "stop_hook_prevented":
      return { reason: decision.reason, messages, error: decision.error };
    case "completed":
      return { reason: "completed", messages };
    default:
      throw new Error(`step chose ${decision.reason} for a reply that ended its turn`);
  }
}

/** A meta user message for the model after `messages`, yielded (R-L14 nudge, R-L15 feedback). */
async function* metaMessage(
  run: LoopRun,
  text: string,
  messages: readonly Message[],
): AsyncGenerator<LoopEvent, Message> {
  const message = createUserMessage(text, {
    isMeta: true,
    uuid: run.deps.uuid(),
    parentUuid: lastUuid(messages),
  });
  yield message;
  return message;
}
