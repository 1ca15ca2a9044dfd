import { createUserMessage } from "./create-message.js";
import { abortedDuringTools } from "./interrupts.js";
import type { LoopEvent } from "./loop-events.js";
import type { LoopRun, PhaseOutcome } from "./loop-run.js";
import { freshTurnState, type LoopState } from "./loop-state.js";
import { step } from "./loop-step.js";
import type { AssistantMessage, Message, ToolUseBlock, UserMessage } from "./messages.js";
import type { ModelReply } from "./model-attempt.js";
import { batchContextMessages, firePostToolBatch } from "./post-tool-batch.js";
import { generateToolUseSummary } from "./tool-use-summary.js";

/** The tool calls of a reply, in order, each with the message that made it. */
export function toolUsesOf(
  assistantMessages: readonly AssistantMessage[],
): { readonly block: ToolUseBlock; readonly message: AssistantMessage }[] {
  const calls: { readonly block: ToolUseBlock; readonly message: AssistantMessage }[] = [];
  for (const message of assistantMessages)
    for (const block of message.message.content)
      if (block.type === "tool_use") calls.push({ block, message });
  return calls;
}

/**
 * Phase 5 (§3) and the decision after it: every tool call answered, each as it ends (R-T1/R-T2),
 * the R-L16 abort path, a hook's `continue: false` (R-L6 `hook_stopped`), commands queued during
 * the turn (R-L2), R-L19 `maxTurns`, then the next turn with its tool-use summary started (R-L18).
 */
export async function* runToolTurn(input: {
  readonly run: LoopRun;
  /** The iteration's state with its context and tracking applied. */
  readonly state: LoopState;
  readonly reply: ModelReply;
  /** The history so far: what was sent, then the replies. */
  readonly messages: readonly Message[];
}): AsyncGenerator<LoopEvent, PhaseOutcome> {
  const { run, state, reply, messages } = input;
  const { executor, assistantMessages } = reply;
  const signal = state.toolUseContext.abortController.signal;
  // Without streaming execution every call is queued now, after the stream.
  const calls = toolUsesOf(assistantMessages);
  for (const { block, message } of calls) executor.addTool(block, message.uuid);
  const toolResults: UserMessage[] = [];
  let hookStop: { readonly reason: string } | undefined;
  for await (const outcome of executor.results()) {
    toolResults.push(outcome.message);
    yield outcome.message;
    hookStop ??= outcome.stop;
  }
  if (signal.aborted) {
    const history = yield* abortedDuringTools(
      assistantMessages,
      messages,
      toolResults,
      signal,
      run.deps.uuid,
    );
    return { reason: "aborted_tools", messages: history };
  }
  let answered: readonly Message[] = toolResults;
  if (run.hooks?.postToolBatch?.length) {
    const batchContext = await firePostToolBatch(
      run.hooks,
      calls.map(({ block }) => block),
      toolResults,
      state.toolUseContext,
    );
    // R-X1: the hooks' context goes after the results as markers of its own, kept in the
    // transcript (a resumed session sends it again); never printed, as Claude Code prints none.
    const contextMessages = batchContextMessages(batchContext, toolResults.at(-1)?.uuid ?? null);
    for (const message of contextMessages) yield message;
    answered = [...toolResults, ...contextMessages];
  }
  const decision = step(state, { type: "tools_done", hookStop }, run.config);
  if (decision.type === "terminal" && decision.reason === "hook_stopped") {
    return { reason: "hook_stopped", messages: [...messages, ...answered], error: decision.error };
  }

  const queued = run.queuedCommands?.length ? yield* drainQueuedCommands(run) : [];
  const nextMessages: Message[] = [...messages, ...answered, ...queued];
  const turnCount = state.turnCount + 1;
  // R-L19: no summary is started for a batch nobody will see.
  if (decision.reason === "max_turns") return { reason: "max_turns", messages: nextMessages, turnCount };
  const tracking = state.autoCompactTracking;
  return {
    next: {
      ...state,
      ...freshTurnState(),
      messages: nextMessages,
      autoCompactTracking: { ...tracking, turnCounter: tracking.turnCounter + 1 },
      // R-L18: summarize this batch in the background; awaited during the next stream.
      pendingToolUseSummary: run.config.toolUseSummaryModel
        ? generateToolUseSummary({
            callModel: run.deps.callModel,
            client: run.config.client,
            beforeSend: run.config.beforeSend,
            model: run.config.toolUseSummaryModel,
            assistants: assistantMessages,
            results: toolResults,
            signal,
            uuid: run.deps.uuid,
            onUsage: (spent) => run.summaryUsage.add(spent),
          })
        : undefined,
      turnCount,
      transition: { reason: "next_turn" },
    },
  };
}

/** R-L2: commands queued while this turn ran join the next request; marked started now. */
async function* drainQueuedCommands(run: LoopRun): AsyncGenerator<LoopEvent, UserMessage[]> {
  const messages: UserMessage[] = [];
  for (const command of run.queuedCommands?.splice(0) ?? []) {
    command.onStatus?.("started");
    run.consumed.push(command);
    const message = createUserMessage(command.content, { uuid: command.uuid, parentUuid: null });
    messages.push(message);
    yield message;
  }
  return messages;
}
