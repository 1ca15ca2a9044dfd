import { randomUUID } from "node:crypto";
import { getMaxListeners, setMaxListeners } from "node:events";
import type {
  CacheSafeParams,
  CanUseTool,
  EffortLevel,
  LoopHooks,
  ModelAliasEnv,
  ThinkingConfigParam,
  Tool,
  ToolResult,
  ToolUseContext,
} from "@forkloop/loop-core";
import { toolNameMatches } from "@forkloop/tools";
import { handBackText, ONE_SHOT_AGENT_TYPES, toolsNamedIn } from "./agent-hand-back.js";
import { type AgentPool, responseStarted } from "./agent-pool.js";
import { type AgentProfile, withProfile } from "./agent-profile.js";
import { SubAgentActivity } from "./agent-tool-output.js";
import type { FanOutWarmer } from "./fan-out-warmer.js";
import type { IsolatedSubAgent } from "./isolated-sub-agent.js";
import { ownConversationParams, ownConversationPrompt } from "./own-conversation.js";
import { parentToolAnnotations, parentToolHandler } from "./parent-tool-calls.js";
import type { PermissionModeCell } from "./permission-mode-cell.js";
import { buildSubAgentTask } from "./sub-agent-task.js";
import { selectSubAgentTools } from "./sub-agent-tool-selection.js";
import type { SubAgentEvent, SubAgentHandle, SubAgentResult, SubAgentTask } from "./sub-agent-types.js";
import { subAgentTranscriptPath } from "./transcript.js";

/** What a parent-side tool that forks (Agent, Skill) needs from the session that owns it. */
export interface ForkToolOptions {
  /** The main loop's latest CacheSafeParams (R-F3); forks start from this exact prefix. */
  readonly getCacheSafeParams: () => CacheSafeParams | undefined;
  /**
   * The session's profile: each sub-agent gets it whole (rules, Bash, models file, fallbacks,
   * summary model, context editing), with its own model and turn limit and the mode of the turn
   * that forks it (R-S6: a sub-agent's Bash runs as the parent's does).
   */
  readonly profile: AgentProfile;
  /**
   * The session's live mode (R-S14): sub-agents read it at each call, so `setPermissionMode`
   * during a turn reaches those already running.
   */
  readonly permissionModeCell?: PermissionModeCell;
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
  /**
   * Tools a sub-agent may use when its definition does not say (default: the parent's whole list
   * but Agent/Skill). Exact names and `mcp__server` / `mcp__server__*` (R-M1).
   */
  readonly defaultToolNames?: readonly string[];
  /**
   * The session's tools that run in this process (MCP tools, and any other that is not a worker
   * built-in): a sub-agent's call to one comes back over comlink and runs here, and their
   * annotations go with the task so the worker's proxies keep their traits (R-M1).
   */
  readonly parentTools?: readonly Tool[];
  /** R-F4: a turn's forks on another model are warmed like a batch's first wave (one per session). */
  readonly warmer?: FanOutWarmer;
  /** R-X2: the run's environment an Agent call's `model` alias resolves in (`ANTHROPIC_DEFAULT_HAIKU_MODEL` …). */
  readonly modelEnv?: ModelAliasEnv;
  /**
   * R-X2: the request defaults of a model (its output cap, thinking and effort, as the session's
   * own were chosen): a sub-agent on another model than its parent's gets its model's, as in
   * Claude Code. Unset: it keeps its parent's, clamped to the model.
   */
  readonly requestDefaultsFor?: (model: string) => ModelRequestDefaults;
}

/** What a model's requests carry when nothing else is chosen (R-X2). */
export interface ModelRequestDefaults {
  readonly maxOutputTokens: number;
  readonly thinking?: ThinkingConfigParam;
  readonly effort?: EffortLevel;
}

/** Abort listeners a parent signal may carry before Node warns (one per running fork). */
const MAX_FAN_OUT_LISTENERS = 256;

/** Runs one fork for a tool call and turns its result into the parent's single tool_result (R-F1). */
export async function runForkForTool(
  pool: AgentPool,
  options: ForkToolOptions,
  context: ToolUseContext & { readonly toolUseId: string },
  fork: Parameters<typeof runFork>[3],
): Promise<ToolResult> {
  return (await runFork(pool, options, context, fork)).toolResult;
}

/**
 * A finished fork: the parent's tool_result, and the report a background task's notice and output
 * file carry (R-T5, background-agent.ts) — the sub-agent's own final text when it completed (with
 * an isolated one's merge outcome), never the hand-back frame a foreground call's tool_result wears
 * (R-X1); when it did not complete, the call's answer (why, with forkloop's usage line).
 */
export interface ForkOutcome {
  readonly toolResult: ToolResult;
  readonly report: string;
}

/** runForkForTool with the sub-agent's report beside the tool_result (ForkOutcome). */
export async function runFork(
  pool: AgentPool,
  options: ForkToolOptions,
  context: ToolUseContext & { readonly toolUseId: string },
  fork: {
    readonly name: string;
    readonly querySource: string;
    readonly description?: string;
    /** The task as the tool call gave it (shown as the sub-agent's first message). */
    readonly prompt?: string;
    readonly directive: string;
    /**
     * R-K3: a custom agent's own prompt. Set, the sub-agent is a conversation of its own
     * (own-conversation.ts: this prompt as system, only its tools, `prompt` as its only message)
     * instead of a fork of the parent's (the directive after the parent's history).
     */
    readonly ownConversation?: { readonly agentPrompt: string };
    /** Exact names and MCP server forms (`mcp__server`, `mcp__server__*`). */
    readonly toolNames?: readonly string[];
    readonly disallowedTools?: readonly string[];
    readonly model?: string;
    /** `output_config.effort` of its requests (the Agent call's `effort`); default the parent's. */
    readonly effort?: EffortLevel;
    readonly maxTurns?: number;
    /** The `Agent` tool this sub-agent may call in turn (below the depth limit); runs in the parent. */
    readonly nestedAgentTool?: Tool;
    /** R-T5: the sub-agent's id, when the caller names it (a background task's id is its agent id). */
    readonly agentId?: string;
    /** R-T5: once finished, a message resumes it (resume-agent.ts): its output says canContinueAgent. */
    readonly resumable?: boolean;
    /** R-T5: it runs in the background (the call that starts it has already returned). */
    readonly background?: boolean;
    /** R-T5: told the running sub-agent's handle (SendMessage steers a background one through it). */
    readonly onHandle?: (handle: SubAgentHandle) => void;
    /** R-B2: it works in its own worktree, its change merged into the tree when it ends. */
    readonly isolation?: "worktree";
    /**
     * The Agent tool's subagent_type: set, a completed call carries Claude Code's structured
     * output (agent-tool-output.ts) for tool_use_result and PostToolUse (R-K2, R-X1).
     */
    readonly agentType?: string;
  },
): Promise<ForkOutcome> {
  const parentParams = options.getCacheSafeParams();
  if (!parentParams) {
    return asOutcome({
      isError: true,
      content: `${fork.name} cannot start yet: the session has no saved request prefix.`,
    });
  }
  // A different model is a different cache key: the fork pays its whole prefix (README, R-F3);
  // so is a different effort (R-D3).
  const sameModel = fork.model === undefined || fork.model === parentParams.model;
  const sameEffort = fork.effort === undefined || fork.effort === parentParams.effort;
  // R-X2: another model gets its own output cap, thinking and effort.
  const modelDefaults = sameModel ? undefined : options.requestDefaultsFor?.(fork.model as string);
  const cacheSafeParams =
    sameModel && sameEffort
      ? parentParams
      : {
          ...parentParams,
          ...(sameModel ? {} : { model: fork.model }),
          ...(modelDefaults === undefined
            ? {}
            : {
                maxOutputTokens: modelDefaults.maxOutputTokens,
                thinking: modelDefaults.thinking,
                effort: modelDefaults.effort,
              }),
          ...(sameEffort ? {} : { effort: fork.effort }),
        };
  const agentId = fork.agentId ?? newAgentId();
  const nested = fork.nestedAgentTool;
  const toolNames = selectSubAgentTools(cacheSafeParams, {
    tools: fork.toolNames ?? options.defaultToolNames,
    disallowedTools: fork.disallowedTools,
  });
  // A nested Agent is usable only when the parent's tool list (the fork's, byte for byte) has it.
  const nestedAllowed =
    nested !== undefined &&
    fork.toolNames === undefined &&
    hasTool(cacheSafeParams, nested.name) &&
    !(fork.disallowedTools ?? []).some((pattern) => toolNameMatches(pattern, nested.name));
  if (nestedAllowed) toolNames.push(nested.name);
  let isolated: IsolatedSubAgent | undefined;
  if (fork.isolation === "worktree") {
    try {
      // The worktree machinery loads at the first isolated call (R-V2: not with the SDK).
      const { isolateSubAgent, isolationStateDir } = await import("./isolated-sub-agent.js");
      isolated = await isolateSubAgent({
        cwd: context.cwd,
        workspaceRoots: context.workspaceRoots,
        stateDir: await isolationStateDir(options.transcripts, agentId),
        agentId,
        ...(options.profile.home === undefined ? {} : { home: options.profile.home }),
      });
    } catch (error) {
      return asOutcome({
        isError: true,
        content: `${fork.name} could not give the sub-agent its own worktree: ${(error as Error).message}`,
      });
    }
  }
  const note = isolated?.note ?? "";
  const own = fork.ownConversation;
  const taskParams =
    own === undefined
      ? cacheSafeParams
      : ownConversationParams(cacheSafeParams, { prompt: own.agentPrompt }, toolNames);
  // Nested sub-agents end with the sub-agent that started them (or with the parent's interrupt).
  const nestedAbort = new AbortController();
  const parentTools = [...(nested === undefined ? [] : [nested]), ...(options.parentTools ?? [])];
  const transcripts = options.transcripts;
  const task = buildSubAgentTask({
    id: agentId,
    cwd: isolated?.cwd ?? context.cwd,
    workspaceRoots: isolated?.workspaceRoots ?? context.workspaceRoots,
    cacheSafeParams: taskParams,
    ...(own === undefined
      ? { directive: `${note}${fork.directive}` }
      : { promptMessages: ownConversationPrompt(`${note}${fork.prompt ?? fork.directive}`) }),
    querySource: fork.querySource,
    ...(fork.background === true ? { background: true } : {}),
    ...(fork.description === undefined ? {} : { description: fork.description }),
    ...(fork.prompt === undefined ? {} : { prompt: fork.prompt }),
    toolNames,
    // The session's limits (its token target, its turns) are not the sub-agent's.
    profile: withProfile(options.profile, {
      model: taskParams.model,
      permissionMode: context.options.permissionMode,
      limits: { maxTurns: fork.maxTurns },
    }),
    permissionModeCell: options.permissionModeCell,
    toolAnnotations: parentToolAnnotations(parentTools, taskParams),
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
  const signal = context.abortController.signal;
  // Only a prefix the parent's request did not write needs warming: a fork on another model or
  // effort, or an agent's own conversation (one wave per agent type, model and effort, R-K3).
  const warm =
    taskParams === parentParams
      ? undefined
      : await options.warmer?.enter(
          parentParams,
          `${own === undefined ? "" : `${fork.querySource} `}${taskParams.model}${sameEffort ? "" : ` effort ${fork.effort}`}`,
          signal,
        );
  options.onForkStarted?.(task);
  const activity = new SubAgentActivity(agentId);
  const handle = pool.run(task, {
    ...(options.canUseTool === undefined ? {} : { canUseTool: options.canUseTool }),
    onEvent: (event) => {
      if (responseStarted(event)) warm?.started();
      activity.observe(event);
      options.onEvent?.(event);
    },
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
    ...(parentTools.length === 0 ? {} : { callTool: parentToolHandler(parentTools, context, nestedAbort) }),
  });
  fork.onHandle?.(handle);
  handle.result.finally(() => warm?.started());
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
    const result = await handle.result;
    const alreadyNamed = toolsNamedIn(parentParams.forkContextMessages);
    const output =
      fork.agentType === undefined
        ? undefined
        : activity.output(result, {
            prompt: fork.prompt ?? fork.directive,
            agentType: fork.agentType,
            model: taskParams.model,
            canContinue: fork.resumable === true,
            alreadyNamed,
          });
    // A completed Agent call hands its report back in Claude Code's frame (R-X1); other forks,
    // and a call that failed, end with forkloop's usage line.
    const toolResult: ToolResult =
      output === undefined
        ? forkToolResult(fork.name, result, { resumable: fork.resumable === true })
        : {
            content: handBackText(output, result.text, {
              oneShot: ONE_SHOT_AGENT_TYPES.has(output.agentType),
              alreadyNamed,
            }),
            output,
          };
    const text = (content: string) =>
      output === undefined ? content : [{ type: "text" as const, text: content }];
    // Its own words when it completed as an Agent call; else the call's answer (R-T5).
    const report = output === undefined ? (toolResult.content as string) : result.text;
    if (isolated === undefined)
      return { toolResult: { ...toolResult, content: text(toolResult.content as string) }, report };
    const outcome = await isolated.finish(result);
    return {
      toolResult: {
        ...(toolResult.isError === true || outcome.conflict ? { isError: true } : {}),
        content: text(`${toolResult.content as string}\n${outcome.report}`),
      },
      report: `${report}\n${outcome.report}`,
    };
  } finally {
    signal.removeEventListener("abort", onAbort);
    nestedAbort.abort("the sub-agent that started it has ended");
  }
}

/** A fork's outcome whose report is the call's answer (it ended before its sub-agent ran). */
export function asOutcome(toolResult: ToolResult & { readonly content: string }): ForkOutcome {
  return { toolResult, report: toolResult.content };
}

/** A sub-agent's id: its transcript's name, task_started's task_id, a background task's id. */
export function newAgentId(): string {
  return `agent-${randomUUID().slice(0, 8)}`;
}

function hasTool(params: CacheSafeParams, name: string): boolean {
  return params.tools.some((tool) => "name" in tool && tool.name === name);
}

/**
 * The one tool_result the parent sees: the sub-agent's report plus its usage. A finished sub-agent
 * that a SendMessage resumes (R-T5) gets Claude Code's line after its report, naming the call.
 */
export function forkToolResult(
  name: string,
  result: SubAgentResult,
  options: { readonly resumable?: boolean } = {},
): ToolResult & { readonly content: string } {
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
  const hint =
    options.resumable === true
      ? `\nagentId: ${result.agentId} (use SendMessage with to: '${result.agentId}', summary: '<5-10 word recap>' to continue this agent)`
      : "";
  return { content: `${result.text || "(no text)"}${hint}\n\n${footer}` };
}
