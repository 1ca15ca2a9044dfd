import type { ToolResult, ToolUseContext } from "@forkloop/loop-core";
import { backgroundShellsFor } from "@forkloop/tools";
import type { AgentPool } from "./agent-pool.js";
import { type ForkToolOptions, newAgentId, runForkForTool } from "./fork-tool-support.js";
import type { SubAgentHandle } from "./sub-agent-types.js";

type ForkSpec = Parameters<typeof runForkForTool>[3];

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
  const agentId = newAgentId();
  // SendMessage's messages: steered into the running sub-agent, or held until the pool has it.
  let handle: SubAgentHandle | undefined;
  const held: string[] = [];
  const started = backgroundShellsFor(context.agentState).start({
    kind: "local_agent",
    id: agentId,
    command: fork.prompt ?? fork.directive,
    description: fork.description,
    toolUseId: context.toolUseId,
    // A sub-agent's limits are its turns and budget, not a clock.
    timeoutMs: 0,
    send: (message) => {
      if (handle === undefined) held.push(message);
      else handle.steer(message);
    },
    run: async ({ signal, onOutput }) => {
      const abortController = new AbortController();
      const stop = () => abortController.abort(signal.reason ?? "stopped");
      if (signal.aborted) stop();
      else signal.addEventListener("abort", stop, { once: true });
      try {
        const result = await runForkForTool(
          pool,
          options,
          { ...context, abortController },
          {
            ...fork,
            agentId,
            background: true,
            onHandle: (running) => {
              handle = running;
              for (const message of held.splice(0)) running.steer(message);
            },
          },
        );
        const report = resultText(result);
        onOutput(report);
        return {
          exitCode: result.isError === true ? 1 : 0,
          signal: null,
          timedOut: false,
          aborted: signal.aborted,
          ...(result.isError === true ? { error: report.split("\n", 1)[0] ?? "it failed" } : {}),
          result: report,
        };
      } finally {
        signal.removeEventListener("abort", stop);
      }
    },
  });
  if (typeof started === "string") return { isError: true, content: started };
  return {
    content: [
      "Async agent launched successfully.",
      `agentId: ${started.id} (use it with SendMessage to message the agent while it runs, TaskStop to stop it)`,
      "The agent is working in the background. You will be notified automatically when it completes.",
      "Continue with other tasks that do not overlap its work, or end your response.",
      `output_file: ${started.outputFile} (its report is written there when it ends)`,
    ].join("\n"),
  };
}

function resultText(result: ToolResult): string {
  if (typeof result.content === "string") return result.content;
  return result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");
}
