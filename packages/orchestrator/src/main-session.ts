import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import type { CompactionEvent, CompactSource } from "@forkloop/compaction";
import {
  type AssistantMessage,
  buildCacheSafeParams,
  type CacheSafeParams,
  type CanUseTool,
  costUsd,
  createAgentState,
  createUserMessage,
  defaultMaxOutputTokens,
  getModelInfo,
  type LoopEvent,
  type LoopHooks,
  type Message,
  type OutputConfig,
  type PermissionMode,
  type QueuedCommand,
  query,
  type SystemMessage,
  type Terminal,
  type Tool,
  type ToolUseContext,
  type Usage,
  type UsageTotals,
  usageTotalsOf,
  ZERO_USAGE_TOTALS,
} from "@forkloop/loop-core";
import { createBuiltinTools } from "@forkloop/tools";
import { createAgentContextPipeline } from "./agent-context.js";
import type { AgentDefinition } from "./agent-definitions.js";
import { type AgentPool, createAgentPool } from "./agent-pool.js";
import { type AgentProfile, profileLoopOptions, withProfile } from "./agent-profile.js";
import { createAgentTool } from "./agent-tool.js";
import { createFanOutWarmer } from "./fan-out-warmer.js";
import { parentToolHandler } from "./parent-tool-calls.js";
import { createPermissionModeCell, readPermissionMode, writePermissionMode } from "./permission-mode-cell.js";
import { createPoolCompactRunner, type StartedFork } from "./pool-compact-runner.js";
import { answerOpenToolUses, resumedState } from "./resumed-history.js";
import { type AssembledSession, assembleSession } from "./session-assembly.js";
import { compactionHooks, hookContextMessage, sessionStartContext, submitPrompt } from "./session-hooks.js";
import { createSkillTool } from "./skill-tool.js";
import {
  continuationTask,
  continuedForkResult,
  findInterruptedForks,
  type InterruptedFork,
} from "./sub-agent-continuation.js";
import type { ModelEndpoint, SubAgentEvent, SubAgentTask } from "./sub-agent-types.js";
import {
  readTranscript,
  sessionTranscriptPath,
  subAgentTranscriptPath,
  TRANSCRIPT_FORMAT,
  TranscriptWriter,
} from "./transcript.js";
import { contextLimitsFor, TranscriptTiming } from "./transcript-timing.js";

export interface MainSessionOptions {
  readonly endpoint: ModelEndpoint;
  readonly cwd: string;
  /**
   * The main agent's model settings, limits, permission mode (at start) and rules and Bash; its
   * sub-agents get it whole, with their own model and turn limit.
   */
  readonly profile: AgentProfile;
  /** Where transcripts go (`<dir>/<sessionId>.fltr`, sub-agents under `<dir>/<sessionId>/agents`). */
  readonly sessionsDir: string;
  /** Resume this session: its transcript's history comes first. Default: a new session. */
  readonly resumeSessionId?: string;
  /**
   * The main agent's own tools (default: every built-in tool); Agent and Skill are added. Tools
   * that are not worker built-ins (MCP tools from @forkloop/mcp) run in this process for
   * sub-agents too: their calls come back over comlink (issue 15).
   */
  readonly tools?: readonly Tool[];
  /** Fork tools not to add (a bare deny rule `Agent` / `Skill` removes the tool, as for built-ins). */
  readonly removedTools?: readonly ("Agent" | "Skill")[];
  /** Permission decisions of the main agent and of its sub-agents' asks. Default: allow. */
  readonly canUseTool?: CanUseTool;
  /** Share a pool (e.g. with a batch); otherwise the session creates one and closes it. */
  readonly pool?: AgentPool;
  readonly appendSystemPrompt?: string;
  /** Replaces forkloop's identity and working rules in the system prompt (the Agent SDK's string `systemPrompt`). */
  readonly systemPrompt?: string;
  readonly home?: string;
  readonly agents?: readonly AgentDefinition[];
  /**
   * `output_config.format` of the main loop's requests (structured outputs); with the profile's
   * `effort` it is the loop's `output_config`. Forks get neither: their replies are reports to
   * the parent, not the session's answer.
   */
  readonly outputFormat?: OutputConfig["format"];
  /** R-C5 background session-memory fork (default true). */
  readonly sessionMemory?: boolean;
  /** History growth between session-memory updates (default: compaction's, a quarter of the auto-compact line). */
  readonly sessionMemoryIntervalTokens?: number;
  readonly onSubAgentEvent?: (event: SubAgentEvent) => void;
  /**
   * The main loop's hooks (e.g. `createSettingsHooks(settings, …)`). Sub-agents run them too, in
   * the parent over comlink: PreToolUse/PostToolUse for their tool calls, and `stop` hooks when a
   * sub-agent stops — with the sub-agent's id as `context.agentId` (the main loop's is "main"),
   * which is how settings hooks pick SubagentStop instead of Stop. An in-process stop hook meant
   * for the main agent only checks `context.agentId === "main"`.
   */
  readonly hooks?: LoopHooks;
  /**
   * Levels of sub-agents (default 2): a sub-agent may start sub-agents of its own through `Agent`
   * (they fork from the session's prefix in the same pool), and those may not go further.
   * 1 = sub-agents cannot start sub-agents.
   */
  readonly maxAgentDepth?: number;
  /** Extra workspace roots for the file tools (settings `additionalDirectories`, R-P1). */
  readonly additionalDirectories?: readonly string[];
  /**
   * The main loop's API client. Many sessions in one process pass the same one, so they share
   * its connections; default: a client of its own for `endpoint`.
   */
  readonly client?: Anthropic;
  /** The context pipeline's events (e.g. `compact_started`, for a PreCompact callback). */
  readonly onCompactionEvent?: (event: CompactionEvent) => void;
}

/** Options of one `session.run()` turn. */
export interface SessionRunOptions {
  readonly signal?: AbortSignal;
  /** R-L2: user messages queued while the turn runs join its next request (the array is consumed). */
  readonly queuedCommands?: QueuedCommand[];
  /**
   * This turn's model and permission mode (default: the session's). The system prompt keeps the
   * session's (it is the cached prefix, R-F3); the loop, its forks and the checks use these.
   */
  readonly model?: string;
  readonly permissionMode?: PermissionMode;
}

export interface MainSession {
  readonly sessionId: string;
  readonly transcriptPath: string;
  /** Issue 11: the resumed transcript ended in a torn record (an interrupted write); it was dropped. */
  readonly droppedTornRecord: boolean;
  readonly assembled: AssembledSession;
  readonly pool: AgentPool;
  /** The CacheSafeParams saved after the latest main-loop turn (R-F3). */
  cacheSafeParams(): CacheSafeParams | undefined;
  /** The session's live permission mode (R-S14): what its checks and running sub-agents read now. */
  permissionMode(): PermissionMode;
  /** The history so far (what the next `run` continues). */
  history(): readonly Message[];
  /** One user turn through query(); the generator returns the Terminal (R-L1). */
  run(prompt: string, options?: SessionRunOptions): AsyncGenerator<LoopEvent, Terminal>;
  /**
   * Switches the mode of the sub-agents that inherit it, those already running included (R-S14);
   * the main agent's own checks are the caller's `canUseTool`. The next `run` sets it again.
   */
  setPermissionMode(mode: PermissionMode): void;
  /**
   * Manual compaction (`/compact [instructions]`): one compact request as a cache-safe fork of
   * the latest turn (R-F3), no model turn. On success the history is the summary (+ the newest
   * messages) and the transcript records it, so a resume continues from the summary.
   */
  compact(instructions?: string, options?: { readonly signal?: AbortSignal }): Promise<SessionCompactResult>;
  close(): Promise<void>;
}

/** What `session.compact()` did; a failure is data (the history is then unchanged). */
export type SessionCompactResult =
  | {
      readonly ok: true;
      /** The `compact_boundary` system message (trigger "manual", pre/post tokens). */
      readonly boundary: SystemMessage;
      readonly preTokens: number;
      readonly postTokens: number;
      readonly source: CompactSource;
      /** The compact request(s): a rejected summary is retried once (R-C4). */
      readonly usage: UsageTotals;
      readonly costUsd: number;
    }
  | { readonly ok: false; readonly error: string; readonly usage: UsageTotals; readonly costUsd: number };

/**
 * The main agent of `forkloop run`: assembles the session once (prefetch in parallel, §1.2),
 * runs loop-core's query() in-process with the tools + `Agent` + `Skill`, compaction whose
 * compact and session-memory requests are forks in the pool (R-C4, R-C5, R-F1), saves
 * CacheSafeParams after every turn (R-F3) and appends the transcript as it goes.
 */
export async function createSession(options: MainSessionOptions): Promise<MainSession> {
  const cwd = resolve(options.cwd);
  const { profile } = options;
  const outputConfig: OutputConfig | undefined =
    profile.effort === undefined && options.outputFormat === undefined
      ? undefined
      : {
          ...(profile.effort === undefined ? {} : { effort: profile.effort }),
          ...(options.outputFormat === undefined ? {} : { format: options.outputFormat }),
        };
  const sessionId =
    options.resumeSessionId ?? `s-${new Date().toISOString().slice(0, 10)}-${randomUUID().slice(0, 8)}`;
  const transcriptPath = sessionTranscriptPath(options.sessionsDir, sessionId);
  // R-R12: streamed, folded record by record; the writer below appends after what it read.
  const resumedFile =
    options.resumeSessionId !== undefined && existsSync(transcriptPath)
      ? await readTranscript(transcriptPath)
      : undefined;
  const resumed = resumedFile === undefined ? undefined : resumedState(resumedFile);
  // R-R13: Agent calls a crash cut off continue their sub-agents (at the first turn, below)…
  let interruptedForks = resumed
    ? await findInterruptedForks(options.sessionsDir, sessionId, resumed.messages)
    : [];
  // …and, issue 11, the transcript's other open tool calls get results now.
  const closedToolUses = resumed
    ? answerOpenToolUses(resumed.messages, new Set(interruptedForks.map((fork) => fork.toolUseId)))
    : [];
  let history: Message[] = resumed ? [...resumed.messages, ...closedToolUses] : [];
  let latest: CacheSafeParams | undefined = resumed?.cacheSafeParams;

  // Issue 11: the session's own pool starts its first thread when the first fork needs it, so a
  // short session that forks nothing never waits on (or tears down) a thread still loading.
  const pool = options.pool ?? createAgentPool({ endpoint: options.endpoint, minThreads: 0 });
  const ownsPool = options.pool === undefined;
  // Grep/Glob/LS leave out what the deny rules hide (a `.env` is not printed by `Grep SECRET .`).
  const baseTools = options.tools ?? createBuiltinTools({ denyRules: profile.permissionRules.deny });
  const assembled = await assembleSession({
    cwd,
    model: profile.model,
    permissionMode: profile.permissionMode,
    tools: baseTools,
    ...(options.appendSystemPrompt === undefined ? {} : { appendSystemPrompt: options.appendSystemPrompt }),
    ...(options.systemPrompt === undefined ? {} : { systemPrompt: options.systemPrompt }),
    ...(options.home === undefined ? {} : { home: options.home }),
    ...(options.agents === undefined ? {} : { agents: options.agents }),
  });
  // Sub-agents read the mode at each call (R-S14); each turn writes its own, setPermissionMode a switch.
  const permissionModeCell = createPermissionModeCell(profile.permissionMode);
  const forkOptions = {
    getCacheSafeParams: () => latest,
    profile,
    permissionModeCell,
    // The session's own tools that workers do not have (MCP tools…) run here for sub-agents.
    parentTools: baseTools,
    ...(options.canUseTool === undefined ? {} : { canUseTool: options.canUseTool }),
    ...(options.onSubAgentEvent === undefined ? {} : { onEvent: options.onSubAgentEvent }),
    // The whole hook set, Stop hooks included: for a sub-agent they run with its id as
    // `context.agentId`, so settings hooks fire SubagentStop (not Stop), and a blocking answer
    // makes the sub-agent continue with the reason (R-L15), as in Claude Code.
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
    maxDepth: options.maxAgentDepth ?? 2,
    transcripts: { sessionsDir: options.sessionsDir, sessionId },
    warmer: createFanOutWarmer(),
    onForkStarted: (task: SubAgentTask) => linkSubAgent(task),
  };
  /** The session's transcript names each sub-agent's, so a report can draw the fork tree. */
  const linkSubAgent = (task: StartedFork) => {
    if (task.transcriptPath === undefined) return;
    transcript.append({
      type: "sub_agent",
      agentId: task.id,
      transcriptPath: task.transcriptPath,
      querySource: task.querySource,
    });
  };
  const removed = new Set(options.removedTools ?? []);
  const tools: Tool[] = [...baseTools];
  if (!removed.has("Agent"))
    tools.push(createAgentTool(pool, assembled.agentDefinitions, forkOptions) as unknown as Tool);
  if (assembled.skills.length > 0 && !removed.has("Skill"))
    tools.push(createSkillTool(pool, assembled.skills, forkOptions) as unknown as Tool);

  // Compact and session-memory forks get transcripts too: they are children in the fork tree.
  const runCompact = createPoolCompactRunner(pool, {
    cwd,
    transcriptPath: (agentId) => subAgentTranscriptPath(options.sessionsDir, sessionId, agentId),
    parent: { sessionId, agentId: "main" },
    onForkStarted: linkSubAgent,
  });
  const agentState = createAgentState();
  const workspaceRoots = [cwd, ...(options.additionalDirectories ?? [])];
  const contextFor = (
    abortController: AbortController,
    model: string,
    permissionMode: PermissionMode,
  ): ToolUseContext => ({
    cwd,
    workspaceRoots,
    tools,
    abortController,
    agentId: "main",
    agentState,
    options: { model, permissionMode },
  });
  // What the session hooks see: the context of the turn in flight (or a fresh one between turns).
  let hookContext = contextFor(new AbortController(), profile.model, profile.permissionMode);
  const pipeline = createAgentContextPipeline({
    ...compactionHooks(
      options.hooks,
      () => hookContext,
      () => hookContext.options.model,
    ),
    runCompact,
    modelOverrides: profile.modelOverrides,
    contextEditing: profile.contextEditing,
    ...(options.sessionMemory === false
      ? {}
      : {
          sessionMemory: {
            dir: join(options.sessionsDir, sessionId),
            ...(options.sessionMemoryIntervalTokens === undefined
              ? {}
              : { intervalTokens: options.sessionMemoryIntervalTokens }),
          },
        }),
    ...(options.onCompactionEvent === undefined ? {} : { onEvent: options.onCompactionEvent }),
  });
  const client =
    options.client ??
    new Anthropic({
      apiKey: options.endpoint.apiKey,
      ...(options.endpoint.baseURL === undefined ? {} : { baseURL: options.endpoint.baseURL }),
    });
  const transcript = new TranscriptWriter(
    transcriptPath,
    resumedFile === undefined ? {} : { existing: resumedFile },
  );
  transcript.appendMessages(closedToolUses);
  if (!resumed) {
    transcript.append({
      type: "session_start",
      sessionId,
      agentId: "main",
      cwd,
      model: profile.model,
      querySource: "sdk",
      createdAt: new Date().toISOString(),
      limits: contextLimitsFor(getModelInfo(profile.model, profile.modelOverrides)),
      format: TRANSCRIPT_FORMAT,
    });
  }
  // SessionStart fires once, before the session's first turn or /compact (issue 12 item 4).
  let sessionStarted: Promise<readonly string[]> | undefined;
  const startSession = () => {
    sessionStarted ??= sessionStartContext(options.hooks, {
      source: resumed ? "resume" : "startup",
      model: profile.model,
      context: hookContext,
    });
    return sessionStarted;
  };

  /** UserPromptSubmit dropped the prompt: no turn runs; the transcript says why (R-L6 `hook_stopped`). */
  function promptBlocked(reason: string): Terminal {
    transcript.append({
      type: "terminal",
      reason: "hook_stopped",
      turnCount: 0,
      usage: ZERO_USAGE_TOTALS,
      costUsd: 0,
      endedAt: new Date().toISOString(),
    });
    return {
      reason: "hook_stopped",
      turnCount: 0,
      messages: history,
      usage: ZERO_USAGE_TOTALS,
      error: { type: "prompt_blocked", message: `a UserPromptSubmit hook blocked the prompt: ${reason}` },
    };
  }

  async function* run(
    prompt: string,
    runOptions: SessionRunOptions = {},
  ): AsyncGenerator<LoopEvent, Terminal> {
    const abortController = new AbortController();
    const model = runOptions.model ?? profile.model;
    const permissionMode = runOptions.permissionMode ?? profile.permissionMode;
    writePermissionMode(permissionModeCell, permissionMode);
    const signal = runOptions.signal;
    const onAbort = () => abortController.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    hookContext = contextFor(abortController, model, permissionMode);
    await continueInterruptedForks(permissionMode, abortController);
    const first = sessionStarted === undefined;
    const started = await startSession();
    const verdict = await submitPrompt(options.hooks, { prompt, context: hookContext });
    if (!verdict.ok) {
      signal?.removeEventListener("abort", onAbort);
      return promptBlocked(verdict.reason);
    }
    // SessionStart's context opens the first turn; UserPromptSubmit's follows its prompt.
    const opening = first ? hookContextMessage(started, history.at(-1)) : [];
    const userMessage = createUserMessage(prompt, {
      parentUuid: (opening.at(-1) ?? history.at(-1))?.uuid ?? null,
    });
    const turnMessages = [...opening, userMessage, ...hookContextMessage(verdict.context, userMessage)];
    transcript.appendMessages(turnMessages);
    // Until the loop saves its own after the first turn, a fork (an Agent call in turn 1) uses
    // the prefix of the request in flight, built the way the loop builds it (R-F3).
    latest = buildCacheSafeParams({
      model,
      systemPrompt: assembled.systemPrompt,
      tools,
      thinking: profile.thinking,
      maxOutputTokens: defaultMaxOutputTokens(model, profile.modelOverrides),
      messages: [...history, ...turnMessages],
    });
    let cost = 0;
    const priceOf = (message: AssistantMessage) =>
      costUsd(getModelInfo(message.message.model || model, profile.modelOverrides), message.message.usage);
    const timing = new TranscriptTiming({ append: (record) => transcript.append(record), costOf: priceOf });
    const generator = query({
      messages: [...history, ...turnMessages],
      systemPrompt: assembled.systemPrompt,
      toolUseContext: hookContext,
      querySource: "sdk",
      ...(options.canUseTool === undefined ? {} : { canUseTool: options.canUseTool }),
      // Only the main loop's hooks get the timing stamp; sub-agents stamp their own transcripts.
      hooks: timing.withToolHook(options.hooks),
      ...(runOptions.queuedCommands === undefined ? {} : { queuedCommands: runOptions.queuedCommands }),
      contextPipeline: pipeline,
      client,
      ...(options.endpoint.retry === undefined ? {} : { retry: options.endpoint.retry }),
      recordSnapshots: true,
      ...profileLoopOptions(profile, model),
      ...(profile.thinking === undefined ? {} : { thinking: profile.thinking }),
      ...(outputConfig === undefined ? {} : { outputConfig }),
      onCacheSafeParams: (params) => {
        latest = params;
        transcript.appendCacheSafeParams(params);
      },
    });
    try {
      let step = await generator.next();
      while (!step.done) {
        const event = step.value;
        transcript.appendLoopEvent(event);
        timing.observe(event);
        // A fork started later in this iteration (an Agent call) shares the replaced history.
        if (event.type === "history_replaced" && latest)
          latest = { ...latest, forkContextMessages: event.messages };
        if (event.type === "assistant" && !event.apiError) cost += priceOf(event);
        yield event;
        step = await generator.next();
      }
      const terminal = step.value;
      history = [...terminal.messages];
      transcript.append({
        type: "terminal",
        reason: terminal.reason,
        turnCount: terminal.turnCount,
        usage: terminal.usage,
        costUsd: cost,
        endedAt: new Date().toISOString(),
      });
      return terminal;
    } finally {
      timing.finish();
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /**
   * R-R13: the sub-agents a crash cut off go on from their own transcripts (a cache-safe fork of
   * each one's own prefix) before the session's next turn; their reports answer the Agent calls.
   */
  async function continueInterruptedForks(
    permissionMode: PermissionMode,
    abortController: AbortController,
  ): Promise<void> {
    const forks = interruptedForks;
    interruptedForks = [];
    if (forks.length === 0) return;
    const base = { cwd, workspaceRoots, profile: withProfile(profile, { permissionMode }) };
    const results = await Promise.all(
      forks.map(async (fork) => {
        const task = continuationTask(fork, base);
        if (task === undefined) return answerOpenToolUses(history).filter((m) => answersFork(m, fork));
        const handle = pool.run(task, {
          ...(options.canUseTool === undefined ? {} : { canUseTool: options.canUseTool }),
          ...(options.onSubAgentEvent === undefined ? {} : { onEvent: options.onSubAgentEvent }),
          ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
          callTool: parentToolHandler(baseTools, hookContext, abortController),
        });
        const onAbort = () => handle.cancel(String(abortController.signal.reason ?? "interrupted"));
        abortController.signal.addEventListener("abort", onAbort, { once: true });
        try {
          return [continuedForkResult(fork, await handle.result)];
        } finally {
          abortController.signal.removeEventListener("abort", onAbort);
        }
      }),
    );
    const answers = results.flat();
    transcript.appendMessages(answers);
    history = [...history, ...answers];
  }

  async function compact(
    instructions?: string,
    compactOptions: { readonly signal?: AbortSignal } = {},
  ): Promise<SessionCompactResult> {
    const params = latest;
    const model = params?.model ?? profile.model;
    const modelInfo = getModelInfo(model, profile.modelOverrides);
    const failure = (error: string, spent: readonly Usage[] = []): SessionCompactResult => ({
      ok: false,
      error,
      usage: usageTotalsOf(spent),
      costUsd: spent.reduce((sum, usage) => sum + costUsd(modelInfo, usage), 0),
    });
    if (history.length === 0) return failure("nothing to compact: the session has no messages yet");
    hookContext = contextFor(new AbortController(), model, profile.permissionMode);
    // R-R13: a compaction needs every call answered; interrupted sub-agents finish first.
    await continueInterruptedForks(profile.permissionMode, hookContext.abortController);
    const first = sessionStarted === undefined;
    const started = await startSession();
    if (first && started.length > 0) {
      const opening = hookContextMessage(started, history.at(-1));
      transcript.appendMessages(opening);
      history = [...history, ...opening];
    }
    const text = instructions?.trim() ?? "";
    // The pipeline's own manual path: the latest turn's exact prefix + one instruction (R-F3).
    const outcome = await pipeline.compactNow({
      messages: history,
      model,
      querySource: "sdk",
      tools,
      tracking: { compacted: false, turnCounter: 0, turnId: sessionId, consecutiveFailures: 0 },
      cacheSafeParams: params,
      signal: compactOptions.signal ?? new AbortController().signal,
      ...(text === "" ? {} : { instructions: text }),
    });
    if (!outcome.ok) return failure(outcome.error, outcome.usage);
    history = [...outcome.messages];
    // The boundary as a message, then the whole new history: a resume restarts from it.
    transcript.append({ type: "message", message: outcome.boundary });
    transcript.append({ type: "history", messages: history });
    if (params) {
      latest = { ...params, forkContextMessages: history };
      transcript.appendCacheSafeParams(latest);
    }
    return {
      ok: true,
      boundary: outcome.boundary,
      preTokens: outcome.preTokens,
      postTokens: outcome.postTokens,
      source: outcome.source,
      usage: usageTotalsOf(outcome.usage),
      costUsd: outcome.usage.reduce((sum, usage) => sum + costUsd(modelInfo, usage), 0),
    };
  }

  return {
    sessionId,
    droppedTornRecord: resumedFile?.torn ?? false,
    transcriptPath,
    assembled,
    pool,
    cacheSafeParams: () => latest,
    permissionMode: () => readPermissionMode(permissionModeCell),
    history: () => history,
    run,
    setPermissionMode: (mode) => writePermissionMode(permissionModeCell, mode),
    compact,
    async close() {
      transcript.close();
      if (ownsPool) await pool.close();
    },
  };
}

function answersFork(message: Message, fork: InterruptedFork): boolean {
  const content = message.type === "user" ? message.message.content : "";
  return (
    typeof content !== "string" &&
    content.some((block) => block.type === "tool_result" && block.tool_use_id === fork.toolUseId)
  );
}

/** One-shot: create a session, run one prompt, close. Yields the loop's events. */
export async function* runMainSession(
  options: MainSessionOptions & { readonly prompt: string; readonly signal?: AbortSignal },
): AsyncGenerator<LoopEvent, Terminal & { readonly sessionId: string }> {
  const session = await createSession(options);
  try {
    const terminal = yield* session.run(
      options.prompt,
      options.signal === undefined ? {} : { signal: options.signal },
    );
    return { ...terminal, sessionId: session.sessionId };
  } finally {
    await session.close();
  }
}
