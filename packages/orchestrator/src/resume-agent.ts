import { createUserMessage, type Message, type Tool, type ToolUseContext } from "@forkloop/loop-core";
import { backgroundShellsFor } from "@forkloop/tools";
import type { AgentPool } from "./agent-pool.js";
import { withProfile } from "./agent-profile.js";
import { startAgentTask, steering } from "./background-agent.js";
import {
  asOutcome,
  type ForkOutcome,
  type ForkToolOptions,
  forkToolResult,
  type runFork,
} from "./fork-tool-support.js";
import { parentToolAnnotations, parentToolHandler } from "./parent-tool-calls.js";
import { continuationTask } from "./sub-agent-continuation.js";
import type { SubAgentTask } from "./sub-agent-types.js";
import { readTranscript, subAgentTranscriptPath } from "./transcript.js";

type ForkSpec = Parameters<typeof runFork>[3];

/**
 * True when the main agent's Agent call can be resumed by a message once its sub-agent has
 * finished (R-T5, Claude Code's `canContinueAgent`): its transcript is written (the session
 * has a transcripts directory) and it worked in this tree (an isolated sub-agent's worktree is gone by then).
 */
export function canResume(options: ForkToolOptions, fork: Pick<ForkSpec, "isolation">): boolean {
  return options.transcripts !== undefined && fork.isolation === undefined;
}

/**
 * R-T5: lets SendMessage resume sub-agent `agentId` once it has finished, as Claude Code does
 * ("send a message to resume it from its saved transcript"): the message starts it again as a
 * background task under the same id — its own prefix and history from its transcript, as a crash
 * continuation is (sub-agent-continuation.ts, so its request reads its own cache), with the
 * message as its next user turn and its transcript appended to. Its end is a task notification
 * with its new report, like any background sub-agent's; it can be messaged, stopped and resumed
 * again, and its own Agent calls start nested sub-agents as in its first run.
 */
export function registerResume(
  pool: AgentPool,
  options: ForkToolOptions,
  context: ToolUseContext & { readonly toolUseId: string },
  agentId: string,
  fork: ForkSpec,
): void {
  const transcripts = options.transcripts;
  if (transcripts === undefined) return;
  const transcriptPath = subAgentTranscriptPath(transcripts.sessionsDir, transcripts.sessionId, agentId);
  // Its own Agent calls (a nested sub-agent) and MCP tools run here, as in its first run.
  const parentTools: Tool[] = [
    ...(fork.nestedAgentTool === undefined ? [] : [fork.nestedAgentTool]),
    ...(options.parentTools ?? []),
  ];
  backgroundShellsFor(context.agentState).resumable(agentId, (message) => {
    const messages = steering();
    const abortController = new AbortController();
    return startAgentTask(context, {
      agentId,
      fork: { ...fork, prompt: message },
      abortController,
      send: messages.send,
      result: async (): Promise<ForkOutcome> => {
        const task = await resumedTask(transcriptPath, { agentId, message, parentTools }, options, context);
        if (typeof task === "string") return asOutcome({ isError: true, content: task });
        const handle = pool.run(task, {
          ...(options.canUseTool === undefined ? {} : { canUseTool: options.canUseTool }),
          ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
          ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
          ...(parentTools.length === 0
            ? {}
            : { callTool: parentToolHandler(parentTools, context, abortController) }),
        });
        messages.attach(handle);
        const cancel = () => handle.cancel(String(abortController.signal.reason ?? "stopped"));
        if (abortController.signal.aborted) cancel();
        else abortController.signal.addEventListener("abort", cancel, { once: true });
        // A resumed run's report is its answer as forkloop's usage line closes it (R-T5).
        return asOutcome(forkToolResult(fork.name, await handle.result));
      },
    });
  });
}

/** The resumed sub-agent's task from its transcript, or why it cannot be rebuilt. */
async function resumedTask(
  transcriptPath: string,
  resume: { readonly agentId: string; readonly message: string; readonly parentTools: readonly Tool[] },
  options: ForkToolOptions,
  context: ToolUseContext,
): Promise<SubAgentTask | string> {
  const { agentId, message } = resume;
  const transcript = await readTranscript(transcriptPath).catch((error: unknown) => error as Error);
  if (transcript instanceof Error)
    return `Agent ${agentId} could not be resumed: its transcript could not be read (${transcript.message})`;
  const task = continuationTask(
    { toolUseId: "", assistantUuid: "", agentId, transcriptPath, transcript },
    {
      cwd: context.cwd,
      workspaceRoots: context.workspaceRoots,
      profile: withProfile(options.profile, { permissionMode: context.options.permissionMode }),
    },
  );
  if (task === undefined)
    return `Agent ${agentId} could not be resumed: its transcript has no request prefix to go on from`;
  const annotations = parentToolAnnotations(resume.parentTools, task.cacheSafeParams);
  return {
    ...task,
    // What closes its last turn (results for calls a stop cut off), then the message.
    promptMessages: [...(task.promptMessages as readonly Message[]), createUserMessage(message)],
    background: true,
    ...(options.permissionModeCell === undefined ? {} : { permissionModeCell: options.permissionModeCell }),
    ...(annotations === undefined ? {} : { toolAnnotations: annotations }),
  };
}
