import type { ToolResult, ToolUseContext } from "@forkloop/loop-core";
import { backgroundShellsFor } from "@forkloop/tools";
import type { AgentPool } from "./agent-pool.js";
import { linkAbort } from "./agent-runner.js";
import { launchedResult, startAgentTask } from "./background-agent.js";
import { type ForkToolOptions, newAgentId, runFork } from "./fork-tool-support.js";
import type { SubAgentHandle } from "./sub-agent-types.js";

type ForkSpec = Parameters<typeof runFork>[3];

/**
 * The main agent's foreground Agent call, movable to the background while it runs (R-T5): the
 * Agent SDK's `backgroundTasks()` (Claude Code's Ctrl+B) answers the call at once with the
 * launched notice and the same sub-agent — not a new one — goes on as a background task: its end
 * a task notification with its report, SendMessage, TaskStop and stopTask() reach it, and the
 * turn's interrupt no longer does. Not moved, it is an ordinary foreground call.
 */
export function runMovableFork(
  pool: AgentPool,
  options: ForkToolOptions,
  context: ToolUseContext & { readonly toolUseId: string },
  fork: ForkSpec,
): Promise<ToolResult> {
  const agentId = fork.agentId ?? newAgentId();
  let handle: SubAgentHandle | undefined;
  // The turn's interrupt reaches the fork only while it is the turn's (unlinked when it moves).
  const abortController = new AbortController();
  const unlink = linkAbort(context.abortController.signal, abortController);
  const running = runFork(
    pool,
    options,
    { ...context, abortController },
    {
      ...fork,
      agentId,
      onHandle: (started) => {
        handle = started;
      },
    },
  );
  const tasks = backgroundShellsFor(context.agentState);
  return new Promise<ToolResult>((resolve) => {
    const unregister = tasks.movable(context.toolUseId, () => {
      const started = startAgentTask(context, {
        agentId,
        fork,
        abortController,
        send: (message) => handle?.steer(message),
        result: () => running,
      });
      if (typeof started === "string") return false;
      unlink();
      resolve(launchedResult(started.id, started.outputFile, fork, options));
      return true;
    });
    void running.then(({ toolResult }) => {
      unregister();
      unlink();
      resolve(toolResult);
    });
  });
}
