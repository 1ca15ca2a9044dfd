import { isMaxOutputTokens, isPromptTooLong } from "./api-error-kinds.js";
import type { ContextPipeline, ContextStageInput } from "./context-pipeline.js";
import { createUserMessage } from "./create-message.js";
import type { LoopEvent } from "./loop-events.js";
import { keepableCutReply } from "./loop-messages.js";
import { type LoopState, MAX_OUTPUT_TOKENS_RECOVERY_LIMIT } from "./loop-state.js";
import type { AssistantMessage, Message } from "./messages.js";
import type { Terminal, TerminalReason } from "./terminal.js";

export interface WithheldInput {
  /** The error or cut reply that R-L9 kept back from the consumer. */
  readonly withheld: AssistantMessage;
  /** The state to continue from (this iteration's context, tracking and model already applied). */
  readonly state: LoopState;
  readonly messagesForQuery: readonly Message[];
  readonly assistantMessages: readonly AssistantMessage[];
  readonly pipeline: ContextPipeline;
  readonly stageInput: (messages: readonly Message[]) => ContextStageInput;
  readonly escalatedMaxOutputTokens: number;
  /** The output cap of the request that was cut. */
  readonly maxOutputTokens: number;
  readonly uuid: () => string;
}

export type WithheldStep =
  | { readonly next: LoopState }
  | {
      readonly reason: TerminalReason;
      readonly messages: readonly Message[];
      readonly error: Terminal["error"];
    };

export const MAX_OUTPUT_RECOVERY_PROMPT =
  "Output token limit hit. Resume directly where you stopped — no apology, no recap. " +
  "Break the remaining work into smaller pieces.";

/**
 * R-L10, the escalation ladder, weakest step first. Prompt too long: drain staged collapses (not
 * twice in a row) → reactive compact (once, R-L11) → surface. Media error: reactive compact →
 * surface. Output cap: 8K → 64K once → up to 3 "continue" prompts → surface. Each continue
 * returns a complete new state with its transition (R-L5); the withheld message is yielded only
 * when the ladder is exhausted (R-L9).
 */
export async function* recoverWithheld(input: WithheldInput): AsyncGenerator<LoopEvent, WithheldStep> {
  const { withheld, state, messagesForQuery } = input;
  if (isMaxOutputTokens(withheld)) return yield* recoverOutputCap(input);

  if (isPromptTooLong(withheld) && state.transition?.reason !== "collapse_drain_retry") {
    const drained = await input.pipeline.drainCollapse(input.stageInput(messagesForQuery));
    if (drained) {
      yield* drained.boundaries;
      return {
        next: {
          ...state,
          messages: drained.messages,
          autoCompactTracking: drained.tracking,
          transition: { reason: "collapse_drain_retry" },
        },
      };
    }
  }
  if (!state.hasAttemptedReactiveCompact) {
    const compacted = await input.pipeline.reactiveCompact(input.stageInput(messagesForQuery));
    if (compacted) {
      yield* compacted.boundaries;
      return {
        next: {
          ...state,
          messages: compacted.messages,
          autoCompactTracking: compacted.tracking,
          hasAttemptedReactiveCompact: true,
          transition: { reason: "reactive_compact_retry" },
        },
      };
    }
  }
  yield withheld;
  return {
    reason: isPromptTooLong(withheld) ? "prompt_too_long" : "image_error",
    messages: [...messagesForQuery, withheld],
    error: withheld.apiError,
  };
}

async function* recoverOutputCap(input: WithheldInput): AsyncGenerator<LoopEvent, WithheldStep> {
  const { withheld, state, messagesForQuery } = input;
  // First raise the cap (8K → 64K) and send the same request again, once.
  if (state.maxOutputTokensOverride === undefined && input.maxOutputTokens < input.escalatedMaxOutputTokens) {
    return {
      next: {
        ...state,
        messages: messagesForQuery,
        maxOutputTokensOverride: input.escalatedMaxOutputTokens,
        transition: { reason: "max_output_tokens_escalate" },
      },
    };
  }
  // Then keep the cut reply and ask the model to go on, at most 3 times.
  if (state.maxOutputTokensRecoveryCount < MAX_OUTPUT_TOKENS_RECOVERY_LIMIT) {
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
      next: {
        ...state,
        messages: [...messagesForQuery, ...input.assistantMessages, ...(kept ? [kept] : []), prompt],
        maxOutputTokensRecoveryCount: attempt,
        transition: { reason: "max_output_tokens_recovery", attempt },
      },
    };
  }
  yield withheld;
  return {
    reason: "model_error",
    messages: [...messagesForQuery, ...input.assistantMessages, withheld],
    error: {
      type: "max_output_tokens",
      message: `The reply hit the output cap (${input.maxOutputTokens} tokens) after ${MAX_OUTPUT_TOKENS_RECOVERY_LIMIT} recovery attempts`,
    },
  };
}
