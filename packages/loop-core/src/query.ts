import { blockingLimitError, manageContext } from "./context-management.js";
import type { ContextStageInput } from "./context-pipeline.js";
import { createApiErrorMessage } from "./create-message.js";
import { endTurn, failedReply } from "./end-of-turn.js";
import { abortedWhileStreaming } from "./interrupts.js";
import type { LoopEvent } from "./loop-events.js";
import { lastUuid } from "./loop-messages.js";
import {
  finish,
  initialState,
  type PhaseOutcome,
  requestPrefix,
  startRun,
  stateSnapshot,
} from "./loop-run.js";
import type { LoopState, QueuedCommand } from "./loop-state.js";
import type { Message } from "./messages.js";
import { attemptModel } from "./model-attempt.js";
import { continuePausedTurn, isPausedTurn } from "./paused-turn.js";
import type { QueryParams } from "./query-params.js";
import type { Terminal } from "./terminal.js";
import { runToolTurn, toolUsesOf } from "./tool-turn.js";
import { recoverWithheld } from "./withheld-recovery.js";

export type { LoopEvent } from "./loop-events.js";
export { stripThinkingBlocks } from "./loop-messages.js";
export type { QueryParams } from "./query-params.js";

/**
 * R-L1/R-L2: the agent loop. Lazy (nothing runs before the first `.next()`); delegates to
 * `queryLoop` with `yield*`; queued commands consumed by the loop are marked `completed` only
 * when the loop returns normally — a throw or an early `.return()` skips that.
 */
export async function* query(params: QueryParams): AsyncGenerator<LoopEvent, Terminal> {
  const consumed: QueuedCommand[] = [];
  const terminal = yield* queryLoop(params, consumed);
  for (const command of consumed) command.onStatus?.("completed");
  return terminal;
}

/**
 * One iteration per model call, in the phases of §1.2 (prefetch and build happen in the session
 * and in `buildRequest`): context management → the model attempt → (abort) → recovery of a
 * withheld reply, or the continuation of a paused turn, or the end of the turn, or the tools → the
 * next state. Each phase is a named function in its own module and ends in a `PhaseOutcome`: the
 * next state or the terminal.
 */
async function* queryLoop(
  params: QueryParams,
  consumed: QueuedCommand[],
): AsyncGenerator<LoopEvent, Terminal> {
  const run = startRun(params, consumed);
  const { config, pipeline, deps } = run;
  let state: LoopState = initialState(params, run);
  const end = (outcome: Exclude<PhaseOutcome, { next: LoopState }>) => finish(run, state, outcome);

  while (true) {
    if (config.recordSnapshots) yield stateSnapshot(state);
    const { toolUseContext } = state;
    const signal = toolUseContext.abortController.signal;
    const model = toolUseContext.options.model;
    const maxOutputTokens = state.maxOutputTokensOverride ?? config.defaultMaxOutputTokens;
    // R-F3: the prefix of the requests this iteration sends (the one place it is built); a
    // compaction that runs now (the first iteration of a turn included) forks from it, so its
    // request reads this prefix from the cache.
    const cacheSafeParams = requestPrefix(run, {
      model,
      tools: toolUseContext.tools,
      maxOutputTokens,
      messages: state.messages,
    });
    const stageInput = (
      messages: readonly Message[],
      tracking = state.autoCompactTracking,
    ): ContextStageInput => ({
      messages,
      model,
      querySource: config.querySource,
      tools: toolUseContext.tools,
      tracking,
      cacheSafeParams,
      signal,
    });

    // Phase 3 — context management (§4), then the R-C7 hard limit.
    const managed = yield* manageContext(pipeline, deps, config, stageInput(state.messages));
    const blocking = blockingLimitError(pipeline, managed.messages, model, config);
    if (blocking) {
      const notice = createApiErrorMessage(blocking, model, {
        uuid: deps.uuid(),
        parentUuid: lastUuid(managed.messages),
      });
      yield notice;
      return await end({
        reason: "blocking_limit",
        messages: [...managed.messages, notice],
        error: blocking,
      });
    }

    // Phase 4 — call the model (R-L8: inside a fallback loop).
    const reply = yield* attemptModel({
      run,
      toolUseContext,
      prefix: cacheSafeParams,
      messages: managed.messages,
    });
    if (reply.type === "failed")
      return await end({ reason: "model_error", messages: reply.messages, error: reply.error });
    if (signal.aborted) {
      // A reply that finished with tool calls was stopped while its tools ran (the abort came as
      // its message was handed out): Claude Code's aborted_tools and its tool-use notice (R-L16).
      const toolsRan = reply.assistantMessages.at(-1)?.message.stop_reason === "tool_use";
      const messages = yield* abortedWhileStreaming(reply, signal, deps.uuid, toolsRan);
      return await end({ reason: toolsRan ? "aborted_tools" : "aborted_streaming", messages });
    }
    // R-L18: the previous iteration's summary has had this whole stream to finish.
    if (state.pendingToolUseSummary) {
      const summary = await state.pendingToolUseSummary;
      if (summary) yield summary;
    }
    // What every continue site below builds on: this iteration's context, tracking and model.
    const current: LoopState = {
      ...state,
      toolUseContext: reply.toolUseContext,
      autoCompactTracking: managed.tracking,
      pendingToolUseSummary: undefined,
    };

    // Phase 6 — the continue decision, after the phase the reply leads to.
    let outcome: PhaseOutcome;
    const messages: Message[] = [...reply.messagesForQuery, ...reply.replies];
    const failure = reply.withheld ? undefined : failedReply(reply.assistantMessages);
    const noToolCalls = toolUsesOf(reply.assistantMessages).length === 0;
    if (reply.withheld) {
      // R-L9/R-L10: the withheld error gets its recovery ladder before anyone sees it.
      reply.executor.discard();
      outcome = yield* recoverWithheld({
        withheld: reply.withheld.message,
        kind: reply.withheld.kind,
        state: current,
        messagesForQuery: reply.messagesForQuery,
        assistantMessages: reply.assistantMessages,
        pipeline,
        stageInput: (history) => stageInput(history, managed.tracking),
        config,
        maxOutputTokens,
        uuid: deps.uuid,
      });
    } else if (failure) {
      reply.executor.discard();
      outcome = { reason: "model_error", messages, error: failure };
    } else if (noToolCalls && isPausedTurn(reply.assistantMessages)) {
      reply.executor.discard();
      outcome = continuePausedTurn({ run, state: current, messages });
    } else if (noToolCalls) {
      reply.executor.discard();
      outcome = yield* endTurn({ run, state: current, messages });
    } else {
      // Phase 5 — tools.
      outcome = yield* runToolTurn({ run, state: current, reply, messages });
    }
    if (!("next" in outcome)) return await end(outcome);
    state = outcome.next;
  }
}
