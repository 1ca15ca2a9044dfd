import type Anthropic from "@anthropic-ai/sdk";
import { createQueryCompactRunner } from "@forkloop/compaction";
import {
  type ApiRetryEvent,
  type AssistantMessage,
  type BeforeSend,
  type CanUseTool,
  callModel,
  costUsd,
  createAgentState,
  createUserMessage,
  getModelInfo,
  type LoopEvent,
  type LoopHooks,
  type Message,
  type PermissionMode,
  type QueuedCommand,
  query,
  type RetryClock,
  type RetryOptions,
  sumUsage,
  type Terminal,
  type TerminalReason,
  type Tool,
  type ToolUseContext,
  toolDefinitions,
  type Usage,
  usageTotalsOf,
} from "@forkloop/loop-core";
import { createBuiltinTools, createPermissionChecker } from "@forkloop/tools";
import { createAgentContextPipeline, meteredCompactRunner } from "./agent-context.js";
import { profileLoopOptions } from "./agent-profile.js";
import { toWireError } from "./errors.js";
import { markPrefixBoundary, toForkHistory } from "./fork-messages.js";
import { parentSideTool } from "./parent-side-tool.js";
import { readPermissionMode } from "./permission-mode-cell.js";
import { compactionHooks, hookContextMessage, openSession } from "./session-hooks.js";
import { subAgentPrefix } from "./sub-agent-prefix.js";
import {
  type CompactionRecord,
  EMPTY_USAGE,
  type ParentToolResult,
  type SubAgentBashOptions,
  type SubAgentEvent,
  type SubAgentResult,
  type SubAgentTask,
  type TokenUsage,
} from "./sub-agent-types.js";
import { TRANSCRIPT_FORMAT, TranscriptWriter } from "./transcript.js";
import { contextLimitsFor, TranscriptTiming } from "./transcript-timing.js";

/** What the runner needs from its host (a worker thread, or the parent process in tests). */
export interface SubAgentIo {
  readonly client: Anthropic;
  /** Retries and deadlines of every model request (the endpoint's `retry`). */
  readonly retry?: RetryOptions;
  /**
   * Issue 16 item 4: awaited before every model request of the sub-agent (turns, tool summaries,
   * compact forks) is sent — in a worker, the pool-wide 429 pause and the parent's request gate.
   */
  readonly beforeSend?: BeforeSend;
  /** R-R11: the clock the model client's waits run on (default the system clock). */
  readonly clock?: RetryClock;
  readonly signal: AbortSignal;
  emit(event: SubAgentEvent): void;
  /** Asks the parent (over comlink in a worker); undefined = nobody can grant an `ask`. */
  readonly askParent?: CanUseTool;
  /** Loop hooks (in a worker: proxies that run the parent's hooks over comlink). */
  readonly hooks?: LoopHooks;
  /** Runs a parent-side tool (an MCP tool, a nested `Agent` call) in the parent. */
  callParentTool(
    toolName: string,
    input: Record<string, unknown>,
    options: { toolUseId: string; agentId: string },
  ): Promise<ParentToolResult>;
  /**
   * Steering from the parent: the loop drains this array between tool turns (R-L2), so a steer
   * joins the next request; what is left when the loop stops starts one more turn.
   */
  readonly steeringQueue: QueuedCommand[];
  /** True when the parent asked to cancel (the signal is aborted too). */
  cancelled(): boolean;
  /** Subscribes to the host's 429 pauses (the worker's fetch sees them), for the transcript. */
  onRateLimited?(listener: (pause: RateLimitPause) => void): void;
}

/** A 429 that paused the pool: when, for how long, until when (epoch ms). */
export interface RateLimitPause {
  readonly at: number;
  readonly retryAfterMs: number;
  readonly until: number;
}

/**
 * The built-in tools, made once per thread and per (deny rules, Bash options): they keep no state
 * of their own (per-agent state is in `agentState`), and reusing the objects reuses loop-core's
 * per-tool definition cache, which takes JSON-schema generation off every fork's start. The deny
 * rules go in because Grep/Glob/LS must leave out files they hide (e.g. `Read(./.env)`): the
 * permission checker sees only the search's root, not the files it walks. The Bash options carry
 * the parent's sandbox and settings `env` (R-S6, R-S4).
 */
const threadBuiltins = new Map<string, Map<string, Tool>>();

function builtinsFor(denyRules: readonly string[], bash: SubAgentBashOptions): Map<string, Tool> {
  const key = JSON.stringify([denyRules, bash.sandbox ?? null, bash.env ?? null]);
  let builtins = threadBuiltins.get(key);
  if (!builtins) {
    const tools = createBuiltinTools({
      denyRules,
      ...(bash.sandbox === undefined ? {} : { bashSandbox: bash.sandbox }),
      ...(bash.env === undefined ? {} : { bashEnv: bash.env }),
    });
    builtins = new Map(tools.map((tool) => [tool.name, tool]));
    threadBuiltins.set(key, builtins);
  }
  return builtins;
}

/** The fork's tools: the parent's exact list; built-ins run here, the rest in the parent. */
export function buildForkTools(task: SubAgentTask, io: SubAgentIo): Tool[] {
  const builtins = builtinsFor(task.profile.permissionRules.deny, task.profile.bash);
  const tools: Tool[] = [];
  for (const definition of task.cacheSafeParams.tools) {
    if (!("input_schema" in definition)) continue; // server tools are not executed by us
    const annotations = task.toolAnnotations?.[definition.name];
    tools.push(
      builtins.get(definition.name) ?? parentSideTool(definition as Anthropic.Messages.Tool, io, annotations),
    );
  }
  return tools;
}

/** The text of a task's prompt (what UserPromptSubmit sees). */
function promptText(messages: SubAgentTask["promptMessages"]): string {
  return messages
    .flatMap((message) => {
      const content = "message" in message ? message.message.content : message.content;
      if (typeof content === "string") return [content];
      return content.flatMap((block) => (block.type === "text" ? [block.text] : []));
    })
    .join("\n");
}

function finalText(messages: readonly Message[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.type === "assistant" && !message.apiError) {
      const text = message.message.content
        .map((block) => (block.type === "text" ? block.text : ""))
        .join("")
        .trim();
      if (text.length > 0) return text;
    }
  }
  return "";
}

function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === "object" && "text" in part ? String(part.text) : ""))
      .join("");
  }
  return "";
}

// Typed subsets of loop-core's TERMINAL_REASONS: a reason renamed there fails the typecheck here.
const FAILED_TERMINALS: ReadonlySet<TerminalReason> = new Set<TerminalReason>([
  "model_error",
  "prompt_too_long",
  "blocking_limit",
  "image_error",
]);
const ABORTED_TERMINALS: ReadonlySet<TerminalReason> = new Set<TerminalReason>([
  "aborted_streaming",
  "aborted_tools",
]);

/**
 * Runs one sub-agent: the parent's exact prefix (R-F3) + the fork's messages through
 * loop-core's query(), streaming progress events and appending its transcript as it goes.
 * Steering messages that arrive while it runs are delivered when the loop next stops, as a new
 * user turn on the same history (so the prefix stays cached).
 */
export async function runSubAgent(task: SubAgentTask, io: SubAgentIo): Promise<SubAgentResult> {
  const started = performance.now();
  const params = task.cacheSafeParams;
  const { profile } = task;
  const maxTurns = profile.limits.maxTurns;
  const modelInfo = (model: string) => getModelInfo(model, profile.modelOverrides);
  const tools = buildForkTools(task, io);
  const expected = JSON.stringify(params.tools);
  const actual = JSON.stringify(toolDefinitions(tools));
  if (expected !== actual) {
    io.emit({
      type: "cache_break",
      agentId: task.id,
      part: "tools",
      detail: "the worker's tool definitions differ from the parent's; the whole prefix is a cache miss",
    });
  }
  const allowed = new Set(task.toolNames);
  const currentMode = (): PermissionMode =>
    task.permissionModeCell === undefined
      ? profile.permissionMode
      : readPermissionMode(task.permissionModeCell);
  let checker: CanUseTool;
  try {
    // The mode is read at each call (R-S14), so a switch reaches a running sub-agent.
    checker = createPermissionChecker({
      mode: currentMode,
      rules: profile.permissionRules,
      cwd: task.cwd,
      workspaceRoots: task.workspaceRoots,
      tools,
      ...(io.askParent === undefined ? {} : { askCaller: io.askParent }),
    });
  } catch (error) {
    // A malformed permission rule is bad input, not a crash: the caller gets a clear failure.
    const message = error instanceof Error ? error.message : String(error);
    return {
      agentId: task.id,
      status: "failed",
      text: "",
      turns: 0,
      usage: EMPTY_USAGE,
      costUsd: 0,
      error: { code: "invalid_task", message },
      durationMs: performance.now() - started,
    };
  }
  const canUseTool: CanUseTool = async (toolName, input, options) => {
    // The fork sends the parent's whole tool list (cache-safe) but may only use its own subset.
    if (!allowed.has(toolName)) {
      return {
        behavior: "deny",
        message: `${toolName} is not available to this sub-agent; its tools are: ${[...allowed].join(", ") || "none"}`,
      };
    }
    return checker(toolName, input, options);
  };

  const transcript =
    task.transcriptPath === undefined ? undefined : new TranscriptWriter(task.transcriptPath);
  // R-R13: a continuation appends to the transcript it continues; its start is there already.
  if (task.continues !== true) {
    transcript?.append({
      type: "session_start",
      sessionId: task.id,
      agentId: task.id,
      cwd: task.cwd,
      model: params.model,
      querySource: task.querySource,
      createdAt: new Date().toISOString(),
      ...(task.parent === undefined ? {} : { parent: task.parent }),
      limits: contextLimitsFor(modelInfo(params.model)),
      format: TRANSCRIPT_FORMAT,
      toolNames: task.toolNames,
      ...(maxTurns === undefined ? {} : { maxTurns }),
    });
    // R-R13: the sub-agent's own request prefix, so a resume can continue it as a cache-safe fork.
    transcript?.appendRequestPrefix(subAgentPrefix(task));
  }
  const timing =
    transcript === undefined
      ? undefined
      : new TranscriptTiming({
          append: (record) => transcript.append(record),
          costOf: (message) =>
            costUsd(modelInfo(message.message.model || params.model), message.message.usage),
        });
  io.onRateLimited?.((pause) =>
    transcript?.append({
      type: "rate_limited",
      at: new Date(pause.at).toISOString(),
      retryAfterMs: pause.retryAfterMs,
      until: new Date(pause.until).toISOString(),
    }),
  );

  const abortController = new AbortController();
  const onAbort = () => abortController.abort(io.signal.reason);
  if (io.signal.aborted) onAbort();
  else io.signal.addEventListener("abort", onAbort, { once: true });
  // One agent state for the whole sub-agent: a steered continuation keeps what it has read.
  const toolUseContext: ToolUseContext = {
    cwd: task.cwd,
    workspaceRoots: task.workspaceRoots,
    tools,
    abortController,
    agentId: task.id,
    agentState: createAgentState(),
    options: { model: params.model, permissionMode: profile.permissionMode },
  };
  const context = markPrefixBoundary(params.forkContextMessages);
  const opened =
    task.startsSession && task.continues !== true
      ? await openSession(io.hooks, {
          source: "startup",
          prompt: promptText(task.promptMessages),
          context: toolUseContext,
        })
      : { ok: true as const, before: [], after: [] };
  if (!opened.ok) {
    io.signal.removeEventListener("abort", onAbort);
    transcript?.close();
    return {
      agentId: task.id,
      status: "failed",
      terminal: "hook_stopped",
      text: "",
      turns: 0,
      usage: EMPTY_USAGE,
      costUsd: 0,
      error: {
        code: "prompt_blocked",
        message: `a UserPromptSubmit hook blocked the prompt: ${opened.reason}`,
      },
      durationMs: performance.now() - started,
    };
  }
  const opening = hookContextMessage(opened.before, context.at(-1));
  const prompt = toForkHistory(task.promptMessages, (opening.at(-1) ?? context.at(-1))?.uuid ?? null);
  let history: Message[] = [
    ...context,
    ...opening,
    ...prompt,
    ...hookContextMessage(opened.after, prompt.at(-1)),
  ];
  // A continuation's context is its own transcript's history: only what closes it is new.
  transcript?.appendMessages(task.continues === true ? prompt : history);
  let cost = 0;
  let turns = 0;
  let terminal: Terminal | undefined;
  let usage = EMPTY_USAGE;
  const compactions: CompactionRecord[] = [];
  // §4 for this sub-agent (issue 12 item 3): its compact and session-memory requests are forks of
  // its own prefix, sent from this worker with the same tools (their definitions are in the key).
  const contextPipeline = createAgentContextPipeline({
    ...compactionHooks(
      io.hooks,
      () => toolUseContext,
      () => params.model,
    ),
    runCompact: meteredCompactRunner(
      createQueryCompactRunner({
        client: io.client,
        ...(io.beforeSend === undefined ? {} : { beforeSend: io.beforeSend }),
        tools,
        cwd: task.cwd,
        modelOverrides: profile.modelOverrides,
      }),
      (spent) => {
        usage = sumUsage(usage, usageTotalsOf([spent]));
        cost += costUsd(modelInfo(params.model), spent);
      },
    ),
    modelOverrides: profile.modelOverrides,
    ...(task.sessionMemory === undefined ? {} : { sessionMemory: task.sessionMemory }),
    contextEditing: profile.contextEditing,
  });
  try {
    for (;;) {
      const generator = query({
        messages: history,
        systemPrompt: params.systemPrompt,
        toolUseContext,
        querySource: task.querySource,
        canUseTool,
        ...(timing === undefined
          ? io.hooks === undefined
            ? {}
            : { hooks: io.hooks }
          : { hooks: timing.withToolHook(io.hooks) }),
        client: io.client,
        contextPipeline,
        ...(io.retry === undefined ? {} : { retry: io.retry }),
        ...(io.beforeSend === undefined ? {} : { beforeSend: io.beforeSend }),
        ...(io.clock === undefined ? {} : { deps: { callModel: clockedCallModel(io.clock) } }),
        ...profileLoopOptions(profile, params.model),
        // The prefix decides what is cached (R-F3): its thinking and output cap, not the profile's.
        maxOutputTokens: profile.limits.maxOutputTokens ?? params.maxOutputTokens,
        ...(params.thinking === undefined ? {} : { thinking: params.thinking }),
        ...(maxTurns === undefined ? {} : { maxTurns: maxTurns - turns }),
        queuedCommands: io.steeringQueue,
        recordSnapshots: transcript !== undefined,
      });
      let step = await generator.next();
      while (!step.done) {
        const event = step.value;
        forwardEvent(task.id, event, io, transcript);
        timing?.observe(event);
        if (event.type === "system" && event.compactMetadata) compactions.push({ ...event.compactMetadata });
        if (event.type === "assistant" && !event.apiError) {
          cost += costUsd(modelInfo(event.message.model || params.model), event.message.usage);
        }
        step = await generator.next();
      }
      timing?.finish();
      terminal = step.value;
      turns += terminal.turnCount;
      usage = sumUsage(usage, terminal.usage);
      history = [...terminal.messages];
      const steering = io.steeringQueue.splice(0).map((command) => command.content);
      const canContinue =
        terminal.reason === "completed" && (maxTurns === undefined || turns < maxTurns) && !io.cancelled();
      if (steering.length === 0 || !canContinue) break;
      const steer = createUserMessage(steering.join("\n\n"), { parentUuid: history.at(-1)?.uuid ?? null });
      transcript?.append({ type: "message", message: steer });
      history = [...history, steer];
    }
  } catch (error) {
    const wire = toWireError(error, "query_failed");
    timing?.finish();
    transcript?.close();
    return {
      agentId: task.id,
      status: io.cancelled() ? "cancelled" : "failed",
      text: finalText(history),
      turns,
      usage,
      costUsd: cost,
      ...(compactions.length === 0 ? {} : { compactions }),
      error: { code: wire.code, message: wire.message },
      durationMs: performance.now() - started,
    };
  } finally {
    io.signal.removeEventListener("abort", onAbort);
  }
  transcript?.append({
    type: "terminal",
    reason: terminal.reason,
    turnCount: turns,
    usage,
    costUsd: cost,
    endedAt: new Date().toISOString(),
  });
  transcript?.close();
  const status =
    io.cancelled() || ABORTED_TERMINALS.has(terminal.reason)
      ? "cancelled"
      : FAILED_TERMINALS.has(terminal.reason)
        ? "failed"
        : "completed";
  return {
    agentId: task.id,
    status,
    terminal: terminal.reason,
    text: finalText(terminal.messages),
    turns,
    usage,
    costUsd: cost,
    ...(compactions.length === 0 ? {} : { compactions }),
    ...(terminal.error === undefined
      ? status === "cancelled"
        ? { error: { code: "cancelled", message: String(io.signal.reason ?? "cancelled") } }
        : {}
      : { error: { code: terminal.error.type, message: terminal.error.message } }),
    durationMs: performance.now() - started,
  };
}

function forwardEvent(
  agentId: string,
  event: LoopEvent,
  io: SubAgentIo,
  transcript: TranscriptWriter | undefined,
): void {
  forwardEventInner(agentId, event, io);
  transcript?.appendLoopEvent(event);
}

function tokenUsage(usage: Usage): TokenUsage {
  return {
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
  };
}

function forwardEventInner(agentId: string, event: LoopEvent, io: SubAgentIo): void {
  switch (event.type) {
    case "stream_event": {
      const raw = event.event;
      if (raw.type === "message_start") {
        io.emit({ type: "usage", agentId, phase: "start", usage: tokenUsage(raw.message.usage) });
      } else if (raw.type === "content_block_delta" && raw.delta.type === "text_delta") {
        io.emit({ type: "text", agentId, text: raw.delta.text });
      }
      return;
    }
    case "assistant": {
      const message = event as AssistantMessage;
      if (message.apiError) return;
      for (const block of message.message.content) {
        if (block.type === "tool_use") {
          io.emit({ type: "tool_use", agentId, toolUseId: block.id, name: block.name, input: block.input });
        }
      }
      io.emit({ type: "usage", agentId, phase: "end", usage: tokenUsage(message.message.usage) });
      return;
    }
    case "user": {
      const content = (event as Message & { type: "user" }).message.content;
      if (typeof content === "string") return;
      for (const block of content) {
        if (block.type === "tool_result") {
          io.emit({
            type: "tool_result",
            agentId,
            toolUseId: block.tool_use_id,
            isError: block.is_error === true,
            content: toolResultText(block.content).slice(0, 2_000),
          });
        }
      }
      return;
    }
    case "system": {
      const message = event as Message & { type: "system" };
      if (message.subtype === "compact_boundary" && message.compactMetadata) {
        io.emit({
          type: "compact_boundary",
          agentId,
          trigger: message.compactMetadata.trigger,
          preTokens: message.compactMetadata.preTokens,
          postTokens: message.compactMetadata.postTokens,
        });
      }
      return;
    }
    case "api_retry": {
      const retry = event as ApiRetryEvent;
      io.emit({
        type: "api_retry",
        agentId,
        attempt: retry.attempt,
        maxRetries: retry.maxRetries,
        delayMs: retry.delayMs,
        error: retry.error,
        ...(retry.resumesAt === undefined ? {} : { resumesAt: retry.resumesAt }),
      });
      return;
    }
    default:
      return;
  }
}

/** The model client waiting on `clock` (R-R11: a pool's shared clock). */
function clockedCallModel(clock: RetryClock): typeof callModel {
  return (request) => callModel({ ...request, clock });
}
