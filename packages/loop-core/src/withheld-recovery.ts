import type { WithheldKind } from "./api-error-kinds.js";
import { historyReplaced } from "./context-management.js";
import type { ContextPipeline, ContextStageInput } from "./context-pipeline.js";
import { createApiErrorMessage, createUserMessage } from "./create-message.js";
import type { LoopEvent } from "./loop-events.js";
import { keepableCutReply } from "./loop-messages.js";
import type { PhaseOutcome } from "./loop-run.js";
import type { LoopState } from "./loop-state.js";
import { type StepConfig, step } from "./loop-step.js";
import type { AssistantMessage, Message } from "./messages.js";
import type { ContinueReason, TerminalReason } from "./terminal.js";

export interface WithheldInput {
  /** The error or cut reply that R-L9 kept back from the consumer. */
  readonly withheld: AssistantMessage;
  readonly kind: WithheldKind;
  /** The state to continue from (this iteration's context, tracking and model already applied). */
  readonly state: LoopState;
  readonly messagesForQuery: readonly Message[];
  readonly assistantMessages: readonly AssistantMessage[];
  readonly pipeline: ContextPipeline;
  readonly stageInput: (messages: readonly Message[]) => ContextStageInput;
  readonly config: StepConfig;
  /** The output cap of the request that was cut. */
  readonly maxOutputTokens: number;
  readonly uuid: () => string;
}

/** Claude Code's words (2.1.333), so a model tuned on them resumes the same way (R-L10). */
const MAX_OUTPUT_RECOVERY_PROMPT =
  "Output token limit hit. Resume directly — no apology, no recap of what you were doing. " +
  "Pick up mid-thought if that is where the cut happened. Break remaining work into smaller pieces.";

/**
 * R-L10: the escalation ladder for a withheld reply. `step` picks the rung; this runs it. A rung
 * that needs the pipeline (drain, reactive compact) may find nothing to do, and then `step` is
 * asked again with that rung marked failed. Each continue returns a complete new state with its
 * transition (R-L5); the withheld message is yielded only when the ladder is exhausted (R-L9).
 */
export async function* recoverWithheld(input: WithheldInput): AsyncGenerator<LoopEvent, PhaseOutcome> {
  const { withheld, kind, state, messagesForQuery } = input;
  const failed: ContinueReason[] = [];
  while (true) {
    const decision = step(state, { type: "withheld", kind, failed }, input.config);
    if (decision.type === "terminal") {
      yield withheld;
      if (kind !== "max_output_tokens") return surface(input, decision.reason);
      const notice = cutReplyNotice(input);
      yield notice;
      return {
        reason: decision.reason,
        messages: [...messagesForQuery, ...input.assistantMessages, withheld, notice],
        error: notice.apiError,
      };
    }
    switch (decision.reason) {
      case "collapse_drain_retry": {
        const drained = await input.pipeline.drainCollapse(input.stageInput(messagesForQuery));
        if (!drained) break;
        yield* drained.boundaries;
        yield historyReplaced(drained.messages);
        return {
          next: {
            ...state,
            messages: drained.messages,
            autoCompactTracking: drained.tracking,
            transition: { reason: "collapse_drain_retry" },
          },
        };
      }
      case "reactive_compact_retry": {
        const compacted = await input.pipeline.reactiveCompact(input.stageInput(messagesForQuery));
        if (!compacted) break;
        yield* compacted.boundaries;
        yield historyReplaced(compacted.messages);
        return {
          next: {
            ...state,
            messages: compacted.messages,
            autoCompactTracking: compacted.tracking,
            reactiveCompactAttempted: { ...state.reactiveCompactAttempted, [kind]: true },
            transition: { reason: "reactive_compact_retry" },
          },
        };
      }
      case "max_output_tokens_escalate":
        // Raise the cap (8K → 64K) and send the same request again.
        return {
          next: {
            ...state,
            messages: messagesForQuery,
            maxOutputTokensOverride: input.config.escalatedMaxOutputTokens,
            transition: { reason: "max_output_tokens_escalate" },
          },
        };
      case "max_output_tokens_recovery":
        return { next: yield* continueCutReply(input) };
      default:
        throw new Error(`step chose ${decision.reason} for a withheld ${kind} reply`);
    }
    failed.push(decision.reason);
  }
}

/** Keeps the cut reply and asks the model to go on from where it stopped. */
async function* continueCutReply(input: WithheldInput): AsyncGenerator<LoopEvent, LoopState> {
  const { withheld, state, messagesForQuery } = input;
  const kept = keepableCutReply(withheld);
  const prompt = createUserMessage(MAX_OUTPUT_RECOVERY_PROMPT, {
    isMeta: true,
    uuid: input.uuid(),
    parentUuid: withheld.uuid,
  });
  if (kept) yield kept;
  yield prompt;
  const attempt = state.maxOutputTokensRecoveryCount + 1;
  return {
    ...state,
    messages: [...messagesForQuery, ...input.assistantMessages, ...(kept ? [kept] : []), prompt],
    maxOutputTokensRecoveryCount: attempt,
    transition: { reason: "max_output_tokens_recovery", attempt },
  };
}

function surface(input: WithheldInput, reason: TerminalReason): PhaseOutcome {
  const { withheld, messagesForQuery } = input;
  return { reason, messages: [...messagesForQuery, withheld], error: withheld.apiError };
}

/**
 * R-L10, R-K2: after the last recovery the turn ends on an API-error message that says the reply
 * stayed over the cap, in Claude Code's words (a program reads them as the result's text), after
 * the cut reply itself.
 */
function cutReplyNotice(input: WithheldInput): AssistantMessage {
  return createApiErrorMessage(
    {
      status: null,
      type: "max_output_tokens",
      message: `Claude's response exceeded the ${input.maxOutputTokens} output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.`,
    },
    input.withheld.message.model,
    { uuid: input.uuid(), parentUuid: input.withheld.uuid },
  );
}
