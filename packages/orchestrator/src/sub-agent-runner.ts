import {
  type CanUseTool,
  createAgentState,
  createUserMessage,
  getModelInfo,
  type LoopEvent,
  type Message,
  type Terminal,
} from "@forkloop/loop-core";
import {
  AgentRecorder,
  agentToolContext,
  finishTurn,
  linkAbort,
  openTurn,
  promptBlocked,
  recordAgentEnd,
  runTurn,
  workerAgentOpening,
} from "./agent-runner.js";
import { toWireError } from "./errors.js";
import { markPrefixBoundary, toForkHistory } from "./fork-messages.js";
import { forkPermissions } from "./fork-permissions.js";
import { buildForkTools } from "./fork-tools.js";
import { openForkTranscript } from "./fork-transcript.js";
import { eventForwarder } from "./sub-agent-events.js";
import type { SubAgentIo } from "./sub-agent-io.js";
import {
  AgentSpending,
  finalText,
  promptText,
  subAgentResult,
  terminalOutcome,
} from "./sub-agent-outcome.js";
import { fireStopFailure } from "./sub-agent-stop-failure.js";
import type { SubAgentResult, SubAgentTask } from "./sub-agent-types.js";
import { clockedCallModel, workerPipeline, workerShells, workerTelemetry } from "./worker-agent-setup.js";

/**
 * Runs one sub-agent on the worker-thread host of the agent runner: the parent's exact prefix
 * (R-F3) + the fork's messages through loop-core's query(), streaming progress events and
 * appending its transcript as it goes. Steering messages that arrive while it runs are delivered
 * when the loop next stops, as a new user turn on the same history (so the prefix stays cached).
 */
export async function runSubAgent(task: SubAgentTask, io: SubAgentIo): Promise<SubAgentResult> {
  const started = performance.now();
  const params = task.cacheSafeParams;
  const { profile } = task;
  const maxTurns = profile.limits.maxTurns;
  const result = (status: SubAgentResult["status"], fields: Partial<SubAgentResult>) =>
    subAgentResult(task.id, started, status, fields);
  const tools = buildForkTools(task, io);
  let canUseTool: CanUseTool;
  try {
    canUseTool = forkPermissions(task, tools, io);
  } catch (error) {
    // A malformed permission rule is bad input, not a crash: the caller gets a clear failure.
    const message = error instanceof Error ? error.message : String(error);
    return result("failed", { error: { code: "invalid_task", message } });
  }

  const transcript = openForkTranscript(task, io);
  const recorder = new AgentRecorder(transcript, profile, params.model, workerTelemetry(task, io));
  const abortController = new AbortController();
  const unlink = linkAbort(io.signal, abortController);
  // One agent state for the whole sub-agent: a steered continuation keeps what it has read.
  const agentState = createAgentState();
  const closeShells = workerShells(task, io, agentState);
  const release = async () => {
    unlink();
    await closeShells();
  };
  const toolUseContext = agentToolContext(
    {
      cwd: task.cwd,
      workspaceRoots: task.workspaceRoots,
      tools,
      agentId: task.id,
      agentState,
      denyRules: profile.permissionRules.deny,
    },
    abortController,
    params.model,
    profile.permissionMode,
  );
  const context = markPrefixBoundary(params.forkContextMessages);
  // A batch item opens a session of its own (UserPromptSubmit is its own too); an Agent sub-agent
  // opens with SubagentStart; skill, compact forks and continuations fire neither.
  const opening = workerAgentOpening(task, io.hooks, toolUseContext);
  const opened = await openTurn(opening.submits ? io.hooks : undefined, {
    opening: opening.opening,
    prompt: promptText(task.promptMessages),
    context: toolUseContext,
    previous: context.at(-1),
    promptMessages: (parentUuid) => toForkHistory(task.promptMessages, parentUuid),
  });
  if (!opened.ok) {
    await release();
    transcript?.close();
    const { type: code, message } = promptBlocked(opened.reason);
    return result("failed", { terminal: "hook_stopped", error: { code, message } });
  }
  let history: Message[] = [...context, ...opened.messages];
  // A continuation's context is its own transcript's history: only what closes it is new.
  transcript?.appendMessages(task.continues === true ? opened.messages : history);
  let terminal: Terminal | undefined;
  const spent = new AgentSpending(getModelInfo(params.model, profile.modelOverrides));
  const contextPipeline = workerPipeline(task, io, tools, toolUseContext, (usage) => spent.addRequest(usage));
  const forwardEvent = eventForwarder(task.id, io);
  const onEvent = (event: LoopEvent) => {
    forwardEvent(event);
    if (event.type === "system" && event.compactMetadata) spent.addCompaction(event.compactMetadata);
  };
  try {
    for (;;) {
      const turn = runTurn(
        recorder,
        {
          messages: history,
          // R-F3: the parent's system blocks and tool definitions are sent as the parent sent them.
          systemPrompt: params.systemPrompt,
          toolDefinitions: params.tools,
          toolUseContext,
          querySource: task.querySource,
          canUseTool,
          hooks: io.hooks,
          client: io.client,
          contextPipeline,
          ...(io.retry === undefined ? {} : { retry: io.retry }),
          ...(io.beforeSend === undefined ? {} : { beforeSend: io.beforeSend }),
          ...(io.clock === undefined ? {} : { deps: { callModel: clockedCallModel(io.clock) } }),
          // The prefix decides what is cached (R-F3): its thinking and output cap, not the profile's.
          maxOutputTokens: profile.limits.maxOutputTokens ?? params.maxOutputTokens,
          ...(params.thinking === undefined ? {} : { thinking: params.thinking }),
          // R-X2: the prefix's effort, as Claude Code's sub-agents send the session's (an effort
          // change would invalidate the shared messages cache, R-D3).
          ...(params.effort === undefined ? {} : { outputConfig: { effort: params.effort } }),
          ...(maxTurns === undefined ? {} : { maxTurns: maxTurns - spent.turns }),
          queuedCommands: io.steeringQueue,
          recordSnapshots: transcript !== undefined,
          ...(task.outputFormat === undefined ? {} : { outputConfig: { format: task.outputFormat } }),
        },
        onEvent,
      );
      const ended = await finishTurn(turn);
      terminal = ended.terminal;
      spent.addTurn(terminal, ended.costUsd);
      history = [...terminal.messages];
      const queued = io.steeringQueue.splice(0);
      const steering = queued.map((command) => command.content);
      const canContinue =
        terminal.reason === "completed" &&
        (maxTurns === undefined || spent.turns < maxTurns) &&
        !io.cancelled();
      // A sub-agent's final answer ends its shells: a shell's notice alone opens no turn after it.
      const heard =
        task.startsSession !== true
          ? queued.some((command) => command.kind !== "task_notification")
          : steering.length > 0;
      if (!heard || !canContinue) break;
      const steer = createUserMessage(steering.join("\n\n"), { parentUuid: history.at(-1)?.uuid ?? null });
      transcript?.append({ type: "message", message: steer });
      history = [...history, steer];
    }
    if (terminal !== undefined) await fireStopFailure(io.hooks, terminal, toolUseContext);
  } catch (error) {
    const wire = toWireError(error, "query_failed");
    transcript?.close();
    return result(io.cancelled() ? "cancelled" : "failed", {
      text: finalText(history),
      ...spent.fields(),
      error: { code: wire.code, message: wire.message },
    });
  } finally {
    await release();
  }
  recordAgentEnd(
    transcript,
    { reason: terminal.reason, turnCount: spent.turns, usage: spent.usage },
    spent.costUsd,
  );
  transcript?.close();
  const { status, ...ended } = terminalOutcome(terminal, io.cancelled(), io.signal);
  return result(status, { ...ended, ...spent.fields() });
}
