import { randomUUID } from "node:crypto";
import { getMaxListeners, setMaxListeners } from "node:events";
import type {
  CacheSafeParams,
  CanUseTool,
  LoopHooks,
  ModelInfo,
  PermissionMode,
  Tool,
  ToolResult,
  ToolUseContext,
} from "@forkloop/loop-core";
import type { AgentPool } from "./agent-pool.js";
import { buildSubAgentTask } from "./sub-agent-task.js";
import type {
  ParentToolHandler,
  PermissionRules,
  SubAgentEvent,
  SubAgentResult,
  SubAgentTask,
} from "./sub-agent-types.js";
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
  /**
   * Loop hooks the sub-agents run (in the parent, over comlink). Stop hooks run when a sub-agent
   * stops, with its id as `context.agentId`: settings hooks fire SubagentStop there.
   */
  readonly hooks?: LoopHooks;
  /**
   * Levels of sub-agents: 1 (default) = sub-agents cannot start sub-agents; 2 = a sub-agent's own
   * `Agent` call starts a nested sub-agent (run by the parent, from the session's prefix), which
   * cannot go further; and so on.
   */
  readonly maxDepth?: number;
  /** Transcripts of sub-agents go to `<sessionsDir>/<sessionId>/agents/<agentId>.fltr`. */
  readonly transcripts?: { readonly sessionsDir: string; readonly sessionId: string };
  /** Called when a fork starts (the session links the sub-agent's transcript from its own). */
  readonly onForkStarted?: (task: SubAgentTask) => void;
  /** Built-in tool names a sub-agent may use when its definition does not say (default: all but Agent/Skill). */
  readonly defaultToolNames?: readonly string[];
  /** The models file's entries: each sub-agent's compaction thresholds (R-C7) and costs use them. */
  readonly modelOverrides?: readonly ModelInfo[];
  readonly fallbackModels?: readonly string[];
}

/** Tools that fork sub-agents are parent-side: a sub-agent may not fork again by default. */
const FORKING_TOOLS = new Set(["Agent", "Task", "Skill"]);

export function defaultSubAgentTools(params: CacheSafeParams): string[] {
  return params.tools.flatMap((tool) => ("name" in tool && !FORKING_TOOLS.has(tool.name) ? [tool.name] : []));
}

/** Abort listeners a parent signal may carry before Node warns (one per running fork). */
const MAX_FAN_OUT_LISTENERS = 256;

/** Runs one fork for a tool call and turns its result into the parent's single tool_result (R-F1). */
export async function runForkForTool(
  pool: AgentPool,
  options: ForkToolOptions,
  context: ToolUseContext & { readonly toolUseId: string },
  fork: {
    readonly name: string;
    readonly querySource: string;
    readonly description?: string;
    readonly directive: string;
    readonly toolNames?: readonly string[];
    readonly model?: string;
    readonly maxTurns?: number;
    /** The `Agent` tool this sub-agent may call in turn (below the depth limit); runs in the parent. */
    readonly nestedAgentTool?: Tool;
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
  const nested = fork.nestedAgentTool;
  const toolNames = [
    ...(fork.toolNames ?? options.defaultToolNames ?? defaultSubAgentTools(cacheSafeParams)),
  ];
  // A nested Agent is usable only when the parent's tool list (the fork's, byte for byte) has it.
  if (nested && fork.toolNames === undefined && hasTool(cacheSafeParams, nested.name))
    toolNames.push(nested.name);
  // Nested sub-agents end with the sub-agent that started them (or with the parent's interrupt).
  const nestedAbort = new AbortController();
  const transcripts = options.transcripts;
  const task = buildSubAgentTask({
    id: agentId,
    cwd: context.cwd,
    workspaceRoots: context.workspaceRoots,
    cacheSafeParams,
    directive: fork.directive,
    querySource: fork.querySource,
    ...(fork.description === undefined ? {} : { description: fork.description }),
    toolNames,
    permissionMode: options.permissionMode ?? context.options.permissionMode,
    permissionRules: options.permissionRules,
    maxTurns: fork.maxTurns,
    modelOverrides: options.modelOverrides,
    fallbackModels: options.fallbackModels,
    ...(transcripts === undefined
      ? {}
      : {
          transcriptPath: subAgentTranscriptPath(transcripts.sessionsDir, transcripts.sessionId, agentId),
          parent: {
            sessionId: transcripts.sessionId,
            agentId: context.agentId,
            toolUseId: context.toolUseId,
          },
        }),
  });
  options.onForkStarted?.(task);
  const handle = pool.run(task, {
    ...(options.canUseTool === undefined ? {} : { canUseTool: options.canUseTool }),
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
    ...(nested === undefined ? {} : { callTool: nestedToolHandler(nested, context, nestedAbort) }),
  });
  const signal = context.abortController.signal;
  const onAbort = () => {
    const reason = String(signal.reason ?? "the parent was interrupted");
    handle.cancel(reason);
    nestedAbort.abort(reason);
  };
  if (signal.aborted) onAbort();
  else {
    // Each fork of a fan-out listens on the parent's signal until it ends (removed below): more
    // than 10 at once is by design, not a leak, so Node's leak warning must not fire.
    setMaxListeners(Math.max(getMaxListeners(signal), MAX_FAN_OUT_LISTENERS), signal);
    signal.addEventListener("abort", onAbort, { once: true });
  }
  try {
    return forkToolResult(fork.name, await handle.result);
  } finally {
    signal.removeEventListener("abort", onAbort);
    nestedAbort.abort("the sub-agent that started it has ended");
  }
}

function hasTool(params: CacheSafeParams, name: string): boolean {
  return params.tools.some((tool) => "name" in tool && tool.name === name);
}

/**
 * A sub-agent's `Agent` call, answered in the parent (R-F2 `callbacks`): the input crossed the
 * thread unchecked (the worker's proxy has the parent's JSON schema, not its zod schema), so it
 * is validated here before the nested fork starts.
 */
function nestedToolHandler(
  tool: Tool,
  context: ToolUseContext,
  abortController: AbortController,
): ParentToolHandler {
  return async (toolName, input, callOptions) => {
    if (toolName !== tool.name && !(tool.aliases ?? []).includes(toolName)) {
      return { content: `${toolName} is not available in a sub-agent`, isError: true };
    }
    const parsed = tool.inputSchema.safeParse(input);
    if (!parsed.success) {
      return { content: `Invalid ${tool.name} input: ${parsed.error.message}`, isError: true };
    }
    const result = await tool.call(parsed.data, {
      ...context,
      agentId: callOptions.agentId,
      toolUseId: callOptions.toolUseId,
      abortController,
    });
    const content =
      typeof result.content === "string"
        ? result.content
        : result.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
    return { content, isError: result.isError === true };
  };
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
