import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import {
  type CacheSafeParams,
  createAgentState,
  createUserMessage,
  getModelInfo,
  type LoopEvent,
  loadAnthropicSdk,
  type PermissionMode,
  type Terminal,
  ZERO_USAGE_TOTALS,
} from "@forkloop/loop-core";
import {
  backgroundShellsFor,
  createBuiltinTools,
  forwardTaskNotices,
  runningShellsNote,
} from "@forkloop/tools";
import { createAgentPool } from "./agent-pool.js";
import { profileOutputConfig, withProfile } from "./agent-profile.js";
import {
  AgentRecorder,
  agentToolContext,
  linkAbort,
  openTurn,
  promptBlocked,
  recordAgentEnd,
  recordAgentStart,
  runTurn,
} from "./agent-runner.js";
import { createFanOutWarmer } from "./fan-out-warmer.js";
import type {
  MainSession,
  MainSessionOptions,
  SessionCompactResult,
  SessionRunOptions,
} from "./main-session-types.js";
import { compactFailure, manualCompact } from "./manual-compact.js";
import { instructionsOf } from "./memory-files.js";
import { modelClientOptions } from "./model-client-options.js";
import { parentToolHandler } from "./parent-tool-calls.js";
import { createPermissionModeCell, readPermissionMode, writePermissionMode } from "./permission-mode-cell.js";
import { assembleSession } from "./session-assembly.js";
import { FORK_TOOL_NAMES, startsForkCall, withForkTools } from "./session-fork-tools.js";
import { hookContextMessage, sessionOpening } from "./session-hooks.js";
import { sessionPipeline } from "./session-pipeline.js";
import { resumedCache, sessionStartPoint } from "./session-resume.js";
import { continueForks } from "./sub-agent-continuation.js";
import type { SubAgentTask } from "./sub-agent-types.js";
import { sessionSpan } from "./telemetry/session-span.js";
import { TranscriptWriter } from "./transcript.js";
import { apiWebSearcher, withWebSearcher } from "./web-searcher.js";

export type {
  MainSession,
  MainSessionOptions,
  SessionCompactResult,
  SessionRunOptions,
} from "./main-session-types.js";

/**
 * The main agent of `forkloop run`, on the in-process host of the agent runner: assembles the
 * session once (prefetch in parallel, §1.2), runs loop-core's query() in-process with the tools +
 * `Agent` + `Skill`, compaction whose compact and session-memory requests are forks in the pool
 * (R-C4, R-C5, R-F1), keeps the prefix of the last request the loop announced (R-F3: forks start
 * from it) and appends the transcript as it goes.
 */
export async function createSession(options: MainSessionOptions): Promise<MainSession> {
  const cwd = resolve(options.cwd);
  const { profile } = options;
  const outputConfig = profileOutputConfig(profile, options.outputFormat);
  const start = await sessionStartPoint(options.sessionsDir, options.resumeSessionId);
  const { sessionId, transcriptPath, file: resumedFile } = start;
  const resumed = resumedFile !== undefined;
  let { history, interruptedForks } = start;
  // R-F3: the last request prefix the loop announced (or the resumed transcript's): written only
  // where a request_start passes below, so forks start from the bytes the parent last sent.
  let latest: CacheSafeParams | undefined = start.cacheSafeParams;
  // R-V5: the session's span (when telemetry is on); each turn's agent span is its child.
  const telemetry = await sessionSpan({ sessionId, resumed });

  // The session's own pool starts its first thread when the first fork needs it, so a short
  // session that forks nothing never waits on (or tears down) a thread still loading.
  const pool = options.pool ?? createAgentPool({ endpoint: options.endpoint, minThreads: 0 });
  const ownsPool = options.pool === undefined;
  // Grep/Glob/LS leave out what the deny rules hide (a `.env` is not printed by `Grep SECRET .`).
  // R-T6: WebSearch runs here, through the session's client (made below); sub-agents call it over
  // their parent-side proxy, since a worker has no searcher.
  const webSearch = apiWebSearcher(() => client, options.onSideUsage);
  const baseTools = withWebSearcher(
    options.tools ?? createBuiltinTools({ denyRules: profile.permissionRules.deny }),
    webSearch,
    profile.bash.sandbox,
  );
  // The prompt's options (system prompt and its append, home, memory, skill and agent files,
  // agents given in code) are the session's, by the same names.
  const assembled = await assembleSession({
    ...options,
    cwd,
    model: profile.model,
    permissionMode: profile.permissionMode,
    tools: baseTools,
  });
  // Sub-agents read the mode at each call (R-S14); each turn writes its own, setPermissionMode a switch.
  const permissionModeCell = createPermissionModeCell(profile.permissionMode);
  // What a sub-agent's run asks of this process: permission asks, its events, the hooks.
  const callbacks = {
    ...(options.canUseTool === undefined ? {} : { canUseTool: options.canUseTool }),
    ...(options.onSubAgentEvent === undefined ? {} : { onEvent: options.onSubAgentEvent }),
    // The whole hook set, Stop hooks included: for a sub-agent they run with its id as
    // `context.agentId`, so settings hooks fire SubagentStop (not Stop), and a blocking answer
    // makes the sub-agent continue with the reason (R-L15), as in Claude Code.
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
  };
  const forkOptions = {
    getCacheSafeParams: () => latest,
    profile,
    permissionModeCell,
    // The session's own tools that workers do not have (MCP tools…) run here for sub-agents.
    parentTools: baseTools,
    ...callbacks,
    maxDepth: options.maxAgentDepth ?? 2,
    transcripts: { sessionsDir: options.sessionsDir, sessionId },
    warmer: createFanOutWarmer(),
    ...(options.modelEnv === undefined ? {} : { modelEnv: options.modelEnv }),
    ...(options.requestDefaultsFor === undefined ? {} : { requestDefaultsFor: options.requestDefaultsFor }),
    onForkStarted: (task: SubAgentTask) => transcript.linkSubAgent(task),
  };
  const tools = withForkTools(baseTools, pool, assembled, forkOptions, options.removedTools);
  // Only a pool that outlives the session: closing a session's own pool waits for a loading
  // thread, which a session that forks nothing would then pay for.
  const prewarm = !ownsPool && tools.some((tool) => FORK_TOOL_NAMES.has(tool.name));
  // R-V2: a one-shot process's thread loads on the other core while the first request is made.
  if (prewarm && options.warmPoolAtStart === true) void pool.prewarm();

  const agentState = createAgentState();
  // R-T4: the main agent's background shells; their notices join its turns, the session's end stops them.
  const backgroundShells = backgroundShellsFor(agentState);
  const workspaceRoots = [cwd, ...(options.additionalDirectories ?? [])];
  const contextFor = (abortController: AbortController, model: string, permissionMode: PermissionMode) =>
    agentToolContext(
      { cwd, workspaceRoots, tools, agentId: "main", agentState, denyRules: profile.permissionRules.deny },
      abortController,
      model,
      permissionMode,
    );
  // What the session hooks see: the context of the turn in flight (or a fresh one between turns).
  let hookContext = contextFor(new AbortController(), profile.model, profile.permissionMode);
  const pipeline = sessionPipeline(pool, options, {
    cwd,
    sessionId,
    profile,
    context: () => hookContext,
    onForkStarted: (fork) => transcript.linkSubAgent(fork),
  });
  const client = options.client ?? new (await loadAnthropicSdk())(modelClientOptions(options.endpoint));
  const transcript = new TranscriptWriter(
    transcriptPath,
    resumedFile === undefined ? {} : { existing: resumedFile },
  );
  transcript.appendMessages(start.closedToolUses);
  if (!resumed)
    recordAgentStart(transcript, {
      sessionId,
      agentId: "main",
      cwd,
      model: profile.model,
      querySource: "sdk",
      profile,
    });
  const startSession = sessionOpening(options.hooks, {
    model: profile.model,
    context: () => hookContext,
    resumedCache: resumed
      ? () => resumedCache(start.history, getModelInfo(profile.model, profile.modelOverrides))
      : undefined,
    instructions: instructionsOf(assembled.memoryFiles),
  });

  async function* run(
    prompt: string,
    runOptions: SessionRunOptions = {},
  ): AsyncGenerator<LoopEvent, Terminal> {
    const abortController = new AbortController();
    const model = runOptions.model ?? profile.model;
    const permissionMode = runOptions.permissionMode ?? profile.permissionMode;
    writePermissionMode(permissionModeCell, permissionMode);
    const unlink = linkAbort(runOptions.signal, abortController);
    hookContext = contextFor(abortController, model, permissionMode);
    await continueInterruptedForks(permissionMode, abortController);
    const opened = await openTurn(options.hooks, {
      opening: { event: "SessionStart", context: startSession },
      prompt,
      expansion: runOptions.expansion,
      context: hookContext,
      previous: history.at(-1),
      promptMessages: (parentUuid) => [createUserMessage(prompt, { parentUuid })],
    });
    if (!opened.ok) {
      // UserPromptSubmit dropped the prompt: no turn runs; the transcript says why (R-L6).
      unlink();
      const ended = { reason: "hook_stopped" as const, turnCount: 0, usage: ZERO_USAGE_TOTALS };
      recordAgentEnd(transcript, ended, 0);
      return { ...ended, messages: history, error: promptBlocked(opened.reason, opened.event) };
    }
    const turnMessages = opened.messages;
    transcript.appendMessages(turnMessages);
    const recorder = new AgentRecorder(transcript, profile, model, telemetry?.agent("main", "main"));
    // R-T4: a background command that ends while the turn works is told between its tool turns
    // (R-L2); one that ends after the last is left in the queue for the caller's next turn.
    const queuedCommands = runOptions.queuedCommands ?? [];
    const stopForwarding = forwardTaskNotices(backgroundShells, queuedCommands);
    const onEvent = (event: LoopEvent) => {
      if (event.type === "request_start") {
        latest = event.prefix;
        transcript.appendCacheSafeParams(event.prefix);
      }
      // R-V2: the first fork should not wait for a cold thread. It loads from the moment the
      // reply starts a fork call, while the call's input streams: a session that never forks
      // starts no thread (and its close waits for none).
      if (prewarm && startsForkCall(event)) void pool.prewarm();
      // R-T4: a compaction summarises away the calls that started background commands; the
      // model is told again what still runs (ids, commands, output files).
      if (event.type === "system" && event.compactMetadata) {
        const note = runningShellsNote(backgroundShells);
        if (note !== "")
          queuedCommands.push({ uuid: randomUUID(), content: note, kind: "task_notification" });
      }
    };
    try {
      const { terminal, costUsd: cost } = yield* runTurn(
        recorder,
        {
          messages: [...history, ...turnMessages],
          systemPrompt: assembled.systemPrompt,
          toolUseContext: hookContext,
          querySource: "sdk",
          ...(options.canUseTool === undefined ? {} : { canUseTool: options.canUseTool }),
          // Only the main loop's hooks get the timing stamp; sub-agents stamp their own transcripts.
          hooks: options.hooks,
          queuedCommands,
          contextPipeline: pipeline,
          client,
          ...(options.endpoint.retry === undefined ? {} : { retry: options.endpoint.retry }),
          recordSnapshots: true,
          ...(profile.thinking === undefined ? {} : { thinking: profile.thinking }),
          ...(outputConfig === undefined ? {} : { outputConfig }),
        },
        onEvent,
      );
      history = [...terminal.messages];
      recordAgentEnd(transcript, terminal, cost);
      return terminal;
    } finally {
      stopForwarding();
      unlink();
    }
  }

  /** R-R13: interrupted sub-agents finish (their reports answer their calls) before the next turn. */
  async function continueInterruptedForks(
    permissionMode: PermissionMode,
    abortController: AbortController,
  ): Promise<void> {
    const forks = interruptedForks;
    interruptedForks = [];
    if (forks.length === 0) return;
    const answers = await continueForks(forks, {
      pool,
      base: { cwd, workspaceRoots, profile: withProfile(profile, { permissionMode }) },
      history,
      abortController,
      callbacks: { ...callbacks, callTool: parentToolHandler(baseTools, hookContext, abortController) },
    });
    transcript.appendMessages(answers);
    history = [...history, ...answers];
  }

  async function compact(
    instructions?: string,
    compactOptions: { readonly signal?: AbortSignal } = {},
  ): Promise<SessionCompactResult> {
    const model = latest?.model ?? profile.model;
    if (history.length === 0)
      return compactFailure(
        "nothing to compact: the session has no messages yet",
        getModelInfo(model, profile.modelOverrides),
      );
    hookContext = contextFor(new AbortController(), model, profile.permissionMode);
    // R-R13: a compaction needs every call answered; interrupted sub-agents finish first.
    await continueInterruptedForks(profile.permissionMode, hookContext.abortController);
    const opening = hookContextMessage(await startSession(), history.at(-1));
    transcript.appendMessages(opening);
    history = [...history, ...opening];
    const done = await manualCompact({
      pipeline,
      transcript,
      sessionId,
      tools,
      history,
      params: latest,
      model,
      modelOverrides: profile.modelOverrides,
      instructions,
      signal: compactOptions.signal,
    });
    if (done.history) history = done.history;
    return done.result;
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
    backgroundShells,
    async close() {
      // R-T4: nothing the agent started in the background outlives its session.
      await backgroundShells.close();
      transcript.close();
      if (ownsPool) await pool.close();
      telemetry?.end();
    },
  };
}
