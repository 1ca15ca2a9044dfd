import { type WithheldKind, withheldKind } from "./api-error-kinds.js";
import { buildCacheSafeParams } from "./cache-safe-params.js";
import { apiMicrocompactBoundary } from "./context-editing.js";
import { blockingLimitError, contextTokens, manageContext } from "./context-management.js";
import { type ContextStageInput, passthroughContextPipeline } from "./context-pipeline.js";
import { createApiErrorMessage, createUserMessage } from "./create-message.js";
import { FallbackTriggeredError } from "./errors.js";
import type { LoopEvent } from "./loop-events.js";
import { interruptNotice, lastUuid, stripThinkingBlocks } from "./loop-messages.js";
import { type LoopState, NO_REACTIVE_COMPACT_ATTEMPTED, type QueuedCommand } from "./loop-state.js";
import { step } from "./loop-step.js";
import type { AssistantMessage, Message, SystemMessage, UserMessage } from "./messages.js";
import { yieldMissingToolResultBlocks } from "./missing-tool-results.js";
import type { CanUseTool } from "./permissions.js";
import { productionDeps, type QueryDeps } from "./query-deps.js";
import { type QueryParams, snapshotConfig } from "./query-params.js";
import { runStopHooks } from "./stop-hooks.js";
import { StreamingToolExecutor } from "./streaming-tool-executor.js";
import type { Terminal, TerminalReason } from "./terminal.js";
import { checkTokenBudget, INITIAL_BUDGET_TRACKER } from "./token-budget.js";
import { generateToolUseSummary } from "./tool-use-summary.js";
import { sumUsage, UsageCounter } from "./usage-counter.js";
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

const allowAll: CanUseTool = async () => ({ behavior: "allow" });

async function* queryLoop(
  params: QueryParams,
  consumed: QueuedCommand[],
): AsyncGenerator<LoopEvent, Terminal> {
  const config = snapshotConfig(params);
  const pipeline = params.contextPipeline ?? passthroughContextPipeline;
  const deps: QueryDeps = { ...productionDeps(pipeline), ...params.deps };
  const canUseTool = params.canUseTool ?? allowAll;
  const usage = new UsageCounter();
  const systemPrompt = params.systemPrompt;
  const hooks = params.hooks;
  const onCacheSafeParams = params.onCacheSafeParams;
  // The one live input: commands queued while the loop runs (R-L2).
  const queuedCommands = params.queuedCommands;

  let state: LoopState = {
    messages: params.messages,
    toolUseContext: params.toolUseContext,
    autoCompactTracking: { compacted: false, turnCounter: 0, turnId: deps.uuid(), consecutiveFailures: 0 },
    maxOutputTokensRecoveryCount: 0,
    reactiveCompactAttempted: NO_REACTIVE_COMPACT_ATTEMPTED,
    maxOutputTokensOverride: undefined,
    pendingToolUseSummary: undefined,
    stopHookActive: false,
    blockedStopHooks: [],
    turnCount: 1,
    budgetTracker: INITIAL_BUDGET_TRACKER,
    transition: undefined,
  };

  // R-L18: summary requests are paid for too; the totals include them once they have settled.
  const summaryUsage = new UsageCounter();
  const finish = async (
    reason: TerminalReason,
    messages: readonly Message[],
    error?: Terminal["error"],
  ): Promise<Terminal> => {
    await state.pendingToolUseSummary;
    return {
      reason,
      turnCount: state.turnCount,
      messages,
      usage: sumUsage(usage.totals(), summaryUsage.totals()),
      ...(summaryUsage.apiCalls > 0 ? { toolUseSummaryUsage: summaryUsage.totals() } : {}),
      ...(error ? { error } : {}),
    };
  };

  while (true) {
    let toolUseContext = state.toolUseContext;
    const signal = toolUseContext.abortController.signal;
    let model = toolUseContext.options.model;
    const tools = toolUseContext.tools;
    if (config.recordSnapshots) {
      yield {
        type: "state_snapshot",
        turnCount: state.turnCount,
        transition: state.transition?.reason,
        messageCount: state.messages.length,
        model,
        maxOutputTokensOverride: state.maxOutputTokensOverride,
        maxOutputTokensRecoveryCount: state.maxOutputTokensRecoveryCount,
        hasAttemptedReactiveCompact: Object.values(state.reactiveCompactAttempted).includes(true),
        reactiveCompactAttempted: state.reactiveCompactAttempted,
        stopHookActive: state.stopHookActive,
        autoCompactFailures: state.autoCompactTracking.consecutiveFailures,
      };
    }

    // R-F3: the prefix of the request this iteration sends; a compaction that runs now (the first
    // iteration of a turn included) forks from it, so its request reads this prefix from the cache.
    const maxOutputTokens = state.maxOutputTokensOverride ?? config.defaultMaxOutputTokens;
    const cacheSafeParams = buildCacheSafeParams({
      model,
      systemPrompt,
      tools,
      thinking: config.thinking,
      maxOutputTokens,
      messages: state.messages,
    });

    // Phase 3 — context management (§4), then the R-C7 hard limit.
    const stageInput = (
      messages: readonly Message[],
      tracking = state.autoCompactTracking,
    ): ContextStageInput => ({
      messages,
      model,
      querySource: config.querySource,
      tools,
      tracking,
      cacheSafeParams,
      signal,
    });
    const managed = yield* manageContext(pipeline, deps, config, stageInput(state.messages));
    let messagesForQuery = managed.messages;
    const tracking = managed.tracking;
    const blocking = blockingLimitError(pipeline, messagesForQuery, model, config);
    if (blocking) {
      const notice = createApiErrorMessage(blocking, model, {
        uuid: deps.uuid(),
        parentUuid: lastUuid(messagesForQuery),
      });
      yield notice;
      return await finish("blocking_limit", [...messagesForQuery, notice], blocking);
    }

    // Phase 4 — call the model (R-L8: inside a fallback loop).
    const toolRunOptions = () => ({
      context: toolUseContext,
      canUseTool,
      hooks,
      uuid: deps.uuid,
    });
    let executor = new StreamingToolExecutor(toolRunOptions());
    let assistantMessages: AssistantMessage[] = [];
    // R-C2 cached variant: the API's microcompact boundaries of this attempt, kept in the history
    // right after the reply that reported them (transcripts and resumes see them; system
    // messages are never sent to the API, toApiMessages drops them).
    let apiBoundaries: SystemMessage[] = [];
    const replies = (): Message[] => withBoundaries(assistantMessages, apiBoundaries);
    let withheld: { message: AssistantMessage; kind: WithheldKind } | undefined;
    let fallbackIndex = config.fallbackModels.indexOf(model) + 1;
    const taskBudget = config.taskBudget
      ? {
          total: config.taskBudget.total,
          remaining: Math.max(
            0,
            config.taskBudget.total - usage.outputTokens - contextTokens(pipeline, messagesForQuery, config),
          ),
        }
      : undefined;
    try {
      for (;;) {
        yield { type: "request_start", model, querySource: config.querySource };
        const assistantUuid = deps.uuid();
        try {
          for await (const event of deps.callModel({
            client: config.client,
            model,
            systemPrompt,
            tools,
            messages: messagesForQuery,
            maxOutputTokens,
            thinking: config.thinking,
            querySource: config.querySource,
            signal,
            taskBudget,
            fallbackAvailable: fallbackIndex < config.fallbackModels.length,
            retry: config.retry,
            parentUuid: lastUuid(messagesForQuery),
            assistantUuid,
            uuid: deps.uuid,
            contextEditing: config.contextEditing,
          })) {
            switch (event.type) {
              case "stream_event":
                yield event;
                break;
              case "api_retry":
                // A retried stream replays from scratch: tools started from the failed stream
                // are dropped (safe tools are read-only, running them again is harmless).
                executor.discard();
                executor = new StreamingToolExecutor(toolRunOptions());
                yield event;
                break;
              case "content_block_complete":
                // R-T2: start a safe tool the moment its block is complete, before message_stop.
                if (config.streamingToolExecution && event.block.type === "tool_use") {
                  executor.addTool(event.block, assistantUuid);
                }
                break;
              case "assistant": {
                if (!event.apiError) usage.add(event.message.usage);
                // R-L9: recoverable errors are withheld until every recovery has failed.
                const kind = withheldKind(event);
                if (kind) {
                  withheld = { message: event, kind };
                  break;
                }
                assistantMessages.push(event);
                yield event;
                // R-C2 cached variant: what the API cleared is known only now, from the response.
                const boundary = config.contextEditing
                  ? apiMicrocompactBoundary(event, deps.uuid)
                  : undefined;
                if (boundary) {
                  apiBoundaries.push(boundary);
                  yield boundary;
                }
                if (config.streamingToolExecution && !event.apiError) {
                  for (const block of event.message.content) {
                    if (block.type === "tool_use") executor.addTool(block, event.uuid);
                  }
                }
                break;
              }
              default:
                assertNever(event);
            }
          }
          break;
        } catch (error) {
          const next = config.fallbackModels[fallbackIndex];
          if (!(error instanceof FallbackTriggeredError) || next === undefined) throw error;
          // R-L8 + R-L12 (fallback site): answer the abandoned attempt's tool_use blocks, then
          // tombstone everything it yielded so UIs drop it.
          executor.discard();
          const orphans = [
            ...yieldMissingToolResultBlocks(assistantMessages, [], "Model fallback triggered", deps.uuid),
          ];
          yield* orphans;
          for (const message of [...assistantMessages, ...orphans])
            yield { type: "tombstone", uuid: message.uuid };
          assistantMessages = [];
          apiBoundaries = [];
          withheld = undefined;
          yield { type: "model_fallback", from: model, to: next };
          model = next;
          fallbackIndex += 1;
          toolUseContext = { ...toolUseContext, options: { ...toolUseContext.options, model: next } };
          // Thinking signatures are bound to the model that produced them.
          messagesForQuery = stripThinkingBlocks(messagesForQuery);
          executor = new StreamingToolExecutor(toolRunOptions());
        }
      }
    } catch (error) {
      // R-L12 (model-crash site): whatever the model client threw, no tool_use stays open.
      executor.discard();
      const orphans = [
        ...yieldMissingToolResultBlocks(assistantMessages, [], "Model request failed", deps.uuid),
      ];
      yield* orphans;
      const failure = {
        status: null,
        type: error instanceof Error ? error.name : "model_error",
        message: error instanceof Error ? error.message : String(error),
      };
      const notice = createApiErrorMessage(failure, model, {
        uuid: deps.uuid(),
        parentUuid: lastUuid(messagesForQuery),
      });
      yield notice;
      return await finish("model_error", [...messagesForQuery, ...replies(), ...orphans, notice], failure);
    }

    // R-L16, path 1: aborted while streaming.
    if (signal.aborted) {
      // Tools may have started from blocks of a reply that never completed: that reply is not in
      // the history, so their results would answer a tool_use the API never sees (a 400).
      const kept = new Set(assistantMessages.map((message) => message.uuid));
      const results: UserMessage[] = [];
      for await (const outcome of executor.results()) {
        if (!kept.has(outcome.message.parentUuid ?? "")) continue;
        results.push(outcome.message);
        yield outcome.message;
      }
      const orphans = [
        ...yieldMissingToolResultBlocks(assistantMessages, results, "Interrupted by user", deps.uuid),
      ];
      yield* orphans;
      const messages: Message[] = [...messagesForQuery, ...replies(), ...results, ...orphans];
      const notice = interruptNotice(signal, false, deps.uuid, lastUuid(messages));
      if (notice) {
        yield notice;
        messages.push(notice);
      }
      return await finish("aborted_streaming", messages);
    }

    // R-L18: the previous iteration's summary has had this whole stream to finish.
    if (state.pendingToolUseSummary) {
      const summary = await state.pendingToolUseSummary;
      if (summary) yield summary;
    }

    // What every continue site below builds on: this iteration's context, tracking and model.
    const current: LoopState = {
      ...state,
      toolUseContext,
      autoCompactTracking: tracking,
      pendingToolUseSummary: undefined,
    };

    if (withheld) {
      // R-L9/R-L10: the withheld error gets its recovery ladder before anyone sees it.
      executor.discard();
      const recovery = yield* recoverWithheld({
        withheld: withheld.message,
        kind: withheld.kind,
        state: current,
        messagesForQuery,
        assistantMessages,
        pipeline,
        stageInput: (messages) => stageInput(messages, tracking),
        config,
        maxOutputTokens,
        uuid: deps.uuid,
      });
      if ("next" in recovery) {
        state = recovery.next;
        continue;
      }
      return await finish(recovery.reason, recovery.messages, recovery.error);
    }

    const messagesSoFar: Message[] = [...messagesForQuery, ...replies()];
    const last = assistantMessages.at(-1);
    // R-L11: never run stop hooks after an API error (error → hook blocks → retry → error …).
    if (!last || last.apiError) {
      executor.discard();
      const error = last?.apiError ?? {
        status: null,
        type: "empty_response",
        message: "The model returned no message",
      };
      return await finish("model_error", messagesSoFar, error);
    }

    // R-F3: after the turn, the prefix of the request that succeeded (a fallback changed the model).
    const saveCacheSafeParams = (messages: readonly Message[]): void => {
      onCacheSafeParams?.(
        buildCacheSafeParams({
          model,
          systemPrompt,
          tools,
          thinking: config.thinking,
          maxOutputTokens,
          messages,
        }),
      );
    };

    const toolUses = assistantMessages.flatMap((message) =>
      message.message.content.flatMap((block) => (block.type === "tool_use" ? [{ block, message }] : [])),
    );

    if (toolUses.length === 0) {
      executor.discard();
      saveCacheSafeParams(messagesSoFar);
      // R-L15: stop hooks; a hook that blocked is not re-run on the retry it caused.
      const stop = await runStopHooks(hooks?.stop ?? [], {
        messages: messagesSoFar,
        stopHookActive: state.stopHookActive,
        context: toolUseContext,
        skip: state.stopHookActive ? state.blockedStopHooks : [],
      });
      // R-L14: the user asked for a token target; nudge the model to keep going.
      const budget = checkTokenBudget({
        tracker: state.budgetTracker,
        isSubAgent: config.isSubAgent,
        budget: config.tokenBudget,
        turnTokens: usage.outputTokens,
      });
      const decision = step(
        state,
        {
          type: "end_turn",
          preventContinuation: stop.preventContinuation,
          stopHookBlocking: stop.blockingErrors.length > 0,
          budgetContinues: budget.action === "continue",
        },
        config,
      );
      if (decision.reason === "stop_hook_prevented") {
        return await finish("stop_hook_prevented", messagesSoFar, {
          type: "stop_hook_prevented",
          message: stop.stopReason ?? "A stop hook prevented continuation",
        });
      }
      if (decision.reason === "stop_hook_blocking") {
        const feedback = createUserMessage(`Stop hook feedback:\n${stop.blockingErrors.join("\n")}`, {
          isMeta: true,
          uuid: deps.uuid(),
          parentUuid: lastUuid(messagesSoFar),
        });
        yield feedback;
        state = {
          ...current,
          messages: [...messagesSoFar, feedback],
          maxOutputTokensRecoveryCount: 0,
          maxOutputTokensOverride: undefined,
          // R-L11: reactiveCompactAttempted is carried over, not reset, on this retry.
          stopHookActive: true,
          blockedStopHooks: stop.blockingHooks,
          transition: { reason: "stop_hook_blocking" },
        };
        continue;
      }
      if (decision.reason === "token_budget_continuation" && budget.action === "continue") {
        const nudge = createUserMessage(budget.nudge, {
          isMeta: true,
          uuid: deps.uuid(),
          parentUuid: lastUuid(messagesSoFar),
        });
        yield nudge;
        state = {
          ...current,
          messages: [...messagesSoFar, nudge],
          maxOutputTokensRecoveryCount: 0,
          maxOutputTokensOverride: undefined,
          budgetTracker: budget.tracker,
          transition: { reason: "token_budget_continuation" },
        };
        continue;
      }
      return await finish("completed", messagesSoFar);
    }

    // Phase 5 — tools. Without streaming execution every call is queued now, after the stream.
    for (const { block, message } of toolUses) executor.addTool(block, message.uuid);
    const toolResults: UserMessage[] = [];
    let hookStop: { readonly reason: string } | undefined;
    for await (const outcome of executor.results()) {
      toolResults.push(outcome.message);
      yield outcome.message;
      hookStop ??= outcome.stop;
    }

    // R-L16, path 2: aborted while tools ran.
    if (signal.aborted) {
      const orphans = [
        ...yieldMissingToolResultBlocks(assistantMessages, toolResults, "Interrupted by user", deps.uuid),
      ];
      yield* orphans;
      const messages: Message[] = [...messagesSoFar, ...toolResults, ...orphans];
      const notice = interruptNotice(signal, true, deps.uuid, lastUuid(messages));
      if (notice) {
        yield notice;
        messages.push(notice);
      }
      return await finish("aborted_tools", messages);
    }
    const decision = step(state, { type: "tools_done", hookStopped: hookStop !== undefined }, config);
    if (decision.reason === "hook_stopped" && hookStop) {
      return await finish("hook_stopped", [...messagesSoFar, ...toolResults], {
        type: "hook_stopped",
        message: hookStop.reason,
      });
    }

    // R-L2: commands queued while this turn ran join the next request; marked started now.
    const queuedMessages: UserMessage[] = [];
    for (const command of queuedCommands?.splice(0) ?? []) {
      command.onStatus?.("started");
      consumed.push(command);
      const message = createUserMessage(command.content, { uuid: command.uuid, parentUuid: null });
      queuedMessages.push(message);
      yield message;
    }

    const nextMessages: Message[] = [...messagesSoFar, ...toolResults, ...queuedMessages];
    saveCacheSafeParams(nextMessages);
    const nextTurnCount = state.turnCount + 1;
    // R-L19: no summary is started for a batch nobody will see.
    if (decision.reason === "max_turns") {
      return { ...(await finish("max_turns", nextMessages)), turnCount: nextTurnCount };
    }
    state = {
      messages: nextMessages,
      toolUseContext,
      autoCompactTracking: { ...tracking, turnCounter: tracking.turnCounter + 1 },
      maxOutputTokensRecoveryCount: 0,
      reactiveCompactAttempted: NO_REACTIVE_COMPACT_ATTEMPTED,
      maxOutputTokensOverride: undefined,
      // R-L18: summarize this batch in the background; awaited during the next stream.
      pendingToolUseSummary: config.toolUseSummaryModel
        ? generateToolUseSummary({
            callModel: deps.callModel,
            client: config.client,
            model: config.toolUseSummaryModel,
            assistants: assistantMessages,
            results: toolResults,
            signal,
            uuid: deps.uuid,
            onUsage: (spent) => summaryUsage.add(spent),
          })
        : undefined,
      stopHookActive: false,
      blockedStopHooks: [],
      turnCount: nextTurnCount,
      budgetTracker: state.budgetTracker,
      transition: { reason: "next_turn" },
    };
  }
}

/** The replies in order, each followed by the API microcompact boundary it reported (if any). */
function withBoundaries(
  replies: readonly AssistantMessage[],
  boundaries: readonly SystemMessage[],
): Message[] {
  if (boundaries.length === 0) return [...replies];
  return replies.flatMap((reply) => [
    reply,
    ...boundaries.filter((boundary) => boundary.parentUuid === reply.uuid),
  ]);
}

function assertNever(value: never): never {
  throw new Error(`unexpected model event: ${JSON.stringify(value)}`);
}
