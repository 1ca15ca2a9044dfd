import { randomUUID } from "node:crypto";
import type {
  CacheSafeParams,
  CanUseTool,
  LoopHooks,
  PermissionMode,
  ToolResult,
  ToolUseContext,
} from "@forkloop/loop-core";
import type { AgentPool } from "./agent-pool.js";
import { buildForkDirective } from "./fork-messages.js";
import type { PermissionRules, SubAgentEvent, SubAgentResult, SubAgentTask } from "./sub-agent-types.js";
import { subAgentTranscriptPath } from "./transcript.js";

/** What a parent-side tool that forks (Agent, Skill) needs from the session that owns it. */
export interface ForkToolOptions {
  /** The main loop's latest CacheSafeParams (R-F3); forks start from this exact prefix. */
  readonly getCacheSafeParams: () => CacheSafeParams | undefined;
  /** Sub-agents inherit the parent's mode unless set. */
  readonly permissionMode?: PermissionMode;
  readonly permissionRules?: PermissionRules;
  /** Answers the sub-agents' permission asks (over comlink from their workers). */
  readonly canUseTool?: CanUseTool;
  readonly onEvent?: (event: SubAgentEvent) => void;
  /** Loop hooks the sub-agents run (in the parent, over comlink). */
  readonly hooks?: LoopHooks;
  /** Transcripts of sub-agents go to `<sessionsDir>/<sessionId>/agents/<agentId>.fltr`. */
  readonly transcripts?: { readonly sessionsDir: string; readonly sessionId: string };
  /** Called when a fork starts (the session links the sub-agent's transcript from its own). */
  readonly onForkStarted?: (task: SubAgentTask) => void;
  /** Built-in tool names a sub-agent may use when its definition does not say (default: all but Agent/Skill). */
  readonly defaultToolNames?: readonly string[];
}

/** Tools that fork sub-agents are parent-side: a sub-agent may not fork again by default. */
const FORKING_TOOLS = new Set(["Agent", "Task", "Skill"]);

export function defaultSubAgentTools(params: CacheSafeParams): string[] {
  return params.tools.flatMap((tool) => ("name" in tool && !FORKING_TOOLS.has(tool.name) ? [tool.name] : []));
}

/** Runs one fork for a tool call and turns its result into the parent's single tool_result (R-F1). */
export async function runForkForTool(
  pool: AgentPool,
  options: ForkToolOptions,
  context: ToolUseContext & { readonly toolUseId: string },
  fork: {
    readonly name: string;
    readonly querySource: string;
    readonly directive: string;
    readonly toolNames?: readonly string[];
    readonly model?: string;
    readonly maxTurns?: number;
  },
): Promise<ToolResult> {
  const parentParams = options.getCacheSafeParams();
  if (!parentParams) {
    return {
      isError: true,
      content: `${fork.name} cannot start yet: the session has no saved request prefix.`,
    };
  }
  // A different model is a different cache key: the fork pays its whole prefix (README, R-F3).
  const cacheSafeParams =
    fork.model === undefined || fork.model === parentParams.model
      ? parentParams
      : { ...parentParams, model: fork.model };
  const agentId = `agent-${randomUUID().slice(0, 8)}`;
  const task: SubAgentTask = {
    id: agentId,
    cwd: context.cwd,
    workspaceRoots: context.workspaceRoots,
    cacheSafeParams,
    promptMessages: buildForkDirective(cacheSafeParams, fork.directive),
    querySource: fork.querySource,
    toolNames: [...(fork.toolNames ?? options.defaultToolNames ?? defaultSubAgentTools(cacheSafeParams))],
    permissionMode: options.permissionMode ?? context.options.permissionMode,
    ...(options.permissionRules === undefined ? {} : { permissionRules: options.permissionRules }),
    ...(fork.maxTurns === undefined ? {} : { maxTurns: fork.maxTurns }),
    ...(options.transcripts === undefined
      ? {}
      : {
          transcriptPath: subAgentTranscriptPath(
            options.transcripts.sessionsDir,
            options.transcripts.sessionId,
            agentId,
          ),
          parent: {
            sessionId: options.transcripts.sessionId,
            agentId: context.agentId,
            toolUseId: context.toolUseId,
          },
        }),
  };
  options.onForkStarted?.(task);
  const handle = pool.run(task, {
    ...(options.canUseTool === undefined ? {} : { canUseTool: options.canUseTool }),
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
  });
  const signal = context.abortController.signal;
  const onAbort = () => handle.cancel(String(signal.reason ?? "the parent was interrupted"));
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  try {
    return forkToolResult(fork.name, await handle.result);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** The one tool_result the parent sees: the sub-agent's report plus its usage. */
export function forkToolResult(name: string, result: SubAgentResult): ToolResult {
  const usage = result.usage;
  const footer =
    `[${name} ${result.agentId}: ${result.status}${result.terminal ? ` (${result.terminal})` : ""}, ` +
    `${result.turns} turns, tokens in ${usage.inputTokens} / cache read ${usage.cacheReadInputTokens} / ` +
    `cache write ${usage.cacheCreationInputTokens} / out ${usage.outputTokens}, $${result.costUsd.toFixed(4)}]`;
  if (result.status !== "completed") {
    const reason = result.error ? `${result.error.code}: ${result.error.message}` : result.status;
    return {
      isError: true,
      content: `${name} did not complete (${reason}).\n${result.text}\n${footer}`.trim(),
    };
  }
  return { content: `${result.text || "(no text)"}\n\n${footer}` };
}
