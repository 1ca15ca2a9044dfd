import type { ToolResult, ToolUseContext } from "@forkloop/loop-core";
import {
  type BackgroundRunEnd,
  type BackgroundShellStart,
  type BackgroundShells,
  backgroundShellsFor,
} from "@forkloop/tools";
import type { AgentPool } from "./agent-pool.js";
import { type ForkOutcome, type ForkToolOptions, newAgentId, runFork } from "./fork-tool-support.js";
import type { SubAgentHandle } from "./sub-agent-types.js";

type ForkSpec = Parameters<typeof runFork>[3];

/**
 * An Agent call with `run_in_background` (R-T5), as Claude Code runs it: the sub-agent starts in
 * the pool exactly as a foreground one would (the parent's prefix, so its cache is shared, R-F3)
 * and the call returns at once with its id and output file. It is one of the agent's background
 * tasks, beside its background shells: its end is a task notification carrying its report, the
 * report is written to the output file (Read may read it), SendMessage's messages reach it before
 * its next request (steering, send-message-tool.ts), TaskStop and query().stopTask() cancel
 * it by its id, and the session's end stops it. The turn's interrupt does not reach it: it was
 * started to outlive the call.
 */
export function startAgentInBackground(
  pool: AgentPool,
  options: ForkToolOptions,
  context: ToolUseContext & { readonly toolUseId: string },
  fork: ForkSpec,
): ToolResult {
  const agentId = fork.agentId ?? newAgentId();
  const messages = steering();
  const abortController = new AbortController();
  const started = startAgentTask(context, {
    agentId,
    fork,
    abortController,
    send: messages.send,
    result: () =>
      runFork(
        pool,
        options,
        { ...context, abortController },
        {
          ...fork,
          agentId,
          background: true,
          onHandle: messages.attach,
        },
      ),
  });
  if (typeof started === "string") return { isError: true, content: started };
  return launchedResult(started.id, started.outputFile, fork, options);
}

/**
 * SendMessage's way into a background sub-agent: `send` steers the running sub-agent, or holds
 * the message until `attach` gives its handle (the pool has not started it yet).
 */
export function steering(): {
  readonly send: (message: string) => void;
  readonly attach: (handle: SubAgentHandle) => void;
} {
  let handle: SubAgentHandle | undefined;
  const held: string[] = [];
  return {
    send: (message) => {
      if (handle === undefined) held.push(message);
      else handle.steer(message);
    },
    attach: (running) => {
      handle = running;
      for (const message of held.splice(0)) running.steer(message);
    },
  };
}

/**
 * The call's answer once its sub-agent runs in the background: its id and output file, and
 * Claude Code's structured output for it (`tool_use_result`, PostToolUse's `tool_response`; R-X1).
 */
export function launchedResult(
  agentId: string,
  outputFile: string,
  fork: ForkSpec,
  options: ForkToolOptions,
): ToolResult {
  const resolvedModel = fork.model ?? options.getCacheSafeParams()?.model;
  return {
    output: {
      isAsync: true,
      status: "async_launched",
      agentId,
      description: fork.description,
      ...(resolvedModel === undefined ? {} : { resolvedModel }),
      prompt: fork.prompt ?? fork.directive,
      outputFile,
      canReadOutputFile: true,
      canContinueAgent: fork.resumable === true,
    },
    content: [
      "Async agent launched successfully.",
      `agentId: ${agentId} (use it with SendMessage to message the agent while it runs, TaskStop to stop it)`,
      "The agent is working in the background. You will be notified automatically when it completes.",
      "Continue with other tasks that do not overlap its work, or end your response.",
      `output_file: ${outputFile} (its report is written there when it ends)`,
    ].join("\n"),
  };
}

/**
 * Registers sub-agent `agentId` as one of the agent's background tasks (`local_agent`): `result`
 * is its run (its tool_result and its report), `send` takes SendMessage's messages, its stop aborts `abortController`. A string is
 * why it could not start.
 */
export function startAgentTask(
  context: ToolUseContext & { readonly toolUseId: string },
  task: {
    readonly agentId: string;
    readonly fork: ForkSpec;
    readonly abortController: AbortController;
    readonly send: (message: string) => void;
    readonly result: () => Promise<ForkOutcome>;
  },
): ReturnType<BackgroundShells["start"]> {
  return backgroundShellsFor(context.agentState).start({
    kind: "local_agent",
    id: task.agentId,
    command: task.fork.prompt ?? task.fork.directive,
    description: task.fork.description,
    toolUseId: context.toolUseId,
    // A sub-agent's limits are its turns and budget, not a clock.
    timeoutMs: 0,
    send: task.send,
    run: agentTaskRunner(task.abortController, task.result),
  });
}

/**
 * A background sub-agent task's `run`: the task's stop (TaskStop, stopTask(), the session's end)
 * aborts `abortController`, which the sub-agent's run listens on; its end is its report.
 */
function agentTaskRunner(
  abortController: AbortController,
  result: () => Promise<ForkOutcome>,
): BackgroundShellStart["run"] {
  return async ({ signal, onOutput }) => {
    const stop = () => abortController.abort(signal.reason ?? "stopped");
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
    try {
      return agentTaskEnd(await result(), signal, onOutput);
    } finally {
      signal.removeEventListener("abort", stop);
    }
  };
}

/**
 * A background sub-agent's end as its task records it: the report — the sub-agent's own words as
 * its run passed them (ForkOutcome), not read back out of the tool_result — as its output and notice.
 */
function agentTaskEnd(
  { toolResult, report }: ForkOutcome,
  signal: AbortSignal,
  onOutput: (chunk: string) => void,
): BackgroundRunEnd {
  onOutput(report);
  return {
    exitCode: toolResult.isError === true ? 1 : 0,
    signal: null,
    timedOut: false,
    aborted: signal.aborted,
    ...(toolResult.isError === true ? { error: report.split("\n", 1)[0] ?? "it failed" } : {}),
    result: report,
  };
}
