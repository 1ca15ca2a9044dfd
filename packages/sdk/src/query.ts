import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { isCompactionFork } from "@forkloop/compaction";
import {
  type ModelInfo as CatalogModelInfo,
  type CanUseTool as LoopCanUseTool,
  type LoopEvent,
  type PermissionMode,
  type QueuedCommand,
  SUBMIT_INTERRUPT_REASON,
  type Terminal,
  type Tool,
} from "@forkloop/loop-core";
import {
  type AgentProfileFields,
  agentProfile,
  createSession,
  type MainSession,
  repairTranscript,
  subAgentTranscriptPath,
} from "@forkloop/orchestrator";
import {
  type BackgroundShells,
  type HookRunObserver,
  mergeHooks,
  type SessionEventHooks,
  stopFailureKind,
  taskNotificationText,
  terminalText,
} from "@forkloop/tools";
import { AbortError } from "./abort-error.js";
import { checkAgentSdkOnlyOptions } from "./agent-sdk-only-options.js";
import type {
  AccountInfo,
  AgentInfo,
  McpServerStatus,
  McpSetServersResult,
  ModelInfo,
  RewindFilesResult,
  SDKControlGetContextUsageResponse,
  SDKControlGetUsageResponse,
  SDKControlInitializeResponse,
  SDKControlInterruptResponse,
  SDKControlMcpReadResourceResponse,
  SDKControlReadFileResponse,
  SDKControlReloadOutputStylesResponse,
  SDKControlReloadPluginsResponse,
  SDKControlReloadSkillsResponse,
  SDKControlSetPermissionModeResponse,
  SlashCommand,
} from "./agent-sdk-types/control-types.js";
import type { SDKAssistantMessageError } from "./agent-sdk-types/other-messages.js";
import { assistantErrorKind } from "./api-error-line.js";
import { AsyncChannel } from "./async-channel.js";
import { canUseToolOptions } from "./can-use-tool-options.js";
import { warnCanUseToolShadowed } from "./can-use-tool-shadowed.js";
import { CompactHookDisplay } from "./compact-hook-display.js";
import { contextUsage } from "./context-usage.js";
import { modelSwitchEcho, permissionModeStatus, probeModel } from "./control-echoes.js";
import { debugLog } from "./debug-log.js";
import { type ErrorResultError, errorAfter } from "./error-result.js";
import { withExtraArgs } from "./extra-args.js";
import { createHeadlessPermissions } from "./headless-permissions.js";
import { HookCallbacks, recordingHookDenials } from "./hook-callbacks.js";
import { hookRunMessages } from "./hook-run-messages.js";
import { withMainAgent } from "./main-agent.js";
import { mcpServerSource } from "./mcp-servers.js";
import type { SDKMessage, SDKResultMessage, SDKUserMessageInput } from "./messages.js";
import type { CanUseTool, McpServerConfig, Options, PermissionResult } from "./options.js";
import { OptionsError } from "./options-error.js";
import { permissionPromptTool, promptToolAsk } from "./permission-prompt-tool.js";
import { withPermissionRequest } from "./permission-request-hook.js";
import {
  accountInfo,
  apiKeySourceOf,
  initializeResponse,
  refusedControl,
  supportedAgents,
  supportedCommands,
  supportedModels,
} from "./query-control.js";
import {
  type BypassSettings,
  checkBypass,
  type ResolvedQuery,
  resolveQueryOptions,
} from "./query-options.js";
import { claudeCodeRequestDefaults, type RequestDefaults } from "./request-defaults.js";
import { forkSessionIn, lockSession } from "./session-helpers.js";
import { unarchiveOnResume } from "./session-management.js";
import { readSessionMetadata, writeSessionMetadata } from "./session-metadata.js";
import { sessionEventHooks, settingsHooks } from "./settings.js";
import { processRuntimes, type RuntimeRegistry, type SharedRuntime } from "./shared-runtime.js";
import { parseRunRequest, type RunRequest } from "./slash-commands.js";
import { StreamJsonWriter } from "./stream-json-writer.js";
import { requestOutputFormat, withStructuredOutput } from "./structured-output.js";
import { SubAgentTracker } from "./sub-agent-tracker.js";
import { SubagentOpenings } from "./subagent-openings.js";
import { DEFAULT_MODEL, removedForkTools } from "./tool-selection.js";
import { ToolUseOrder } from "./tool-use-order.js";
import { type PendingPrompt, UserMessageReplay } from "./user-message-replay.js";
import { withWrittenAt } from "./written-at.js";

export type { McpServerStatus, ModelInfo, SlashCommand };

/** The Agent SDK's Query: an async generator of messages with control methods. */
export interface Query extends AsyncGenerator<SDKMessage, void> {
  /**
   * Stops the current turn: a submit-interrupt when input is waiting (it runs next), else a hard
   * interrupt. Answers with the prompts still queued (their uuids).
   */
  interrupt(): Promise<SDKControlInterruptResponse>;
  setPermissionMode(mode: PermissionMode): Promise<SDKControlSetPermissionModeResponse>;
  /** The model of the turns from now on (default: the query's). */
  setModel(model?: string): Promise<void>;
  supportedCommands(): Promise<SlashCommand[]>;
  supportedModels(): Promise<ModelInfo[]>;
  mcpServerStatus(): Promise<McpServerStatus[]>;
  /** More streaming input (as if the prompt iterable had yielded it). */
  streamInput(stream: AsyncIterable<SDKUserMessageInput>): Promise<void>;
  /** Ends the query now: the running turn is interrupted and the session closed. */
  close(): void;
  /** What the session offers (commands, agents, models, account), as it starts. */
  initializationResult(): Promise<SDKControlInitializeResponse>;
  /** The same, read again (the project's agent files once the session has read them). */
  reinitialize(): Promise<SDKControlInitializeResponse>;
  supportedAgents(): Promise<AgentInfo[]>;
  accountInfo(): Promise<AccountInfo>;
  /** The context window's use: system prompt, tools, messages, free space (context-usage.ts). */
  getContextUsage(options?: { detail?: "summary" | "full" }): Promise<SDKControlGetContextUsageResponse>;
  /** Stops a running sub-agent by its task id (task_started's `task_id`); its Agent call ends as cancelled. */
  stopTask(taskId: string): Promise<void>;
  /**
   * Moves the main agent's running foreground Agent calls (the one `toolUseId` started, or every
   * one) to the background: each call answers at once, its sub-agent goes on and is reported by a
   * task notification. True when one moved.
   */
  backgroundTasks(toolUseId?: string): Promise<boolean>;
  /** forkloop keeps no file checkpoints: `canRewind` false, with the reason. */
  rewindFiles(userMessageId: string, options?: { dryRun?: boolean }): Promise<RewindFilesResult>;
  reloadSkills(): Promise<SDKControlReloadSkillsResponse>;
  reloadOutputStyles(): Promise<SDKControlReloadOutputStylesResponse>;
  // Refused with an OptionsError naming the method and why (query-control.ts).
  setMcpPermissionModeOverride(
    serverName: string,
    mode: "default" | "auto" | null,
  ): Promise<{ warning?: string }>;
  setMaxThinkingTokens(maxThinkingTokens: number | null, thinkingDisplay?: string | null): Promise<void>;
  applyFlagSettings(settings: Record<string, unknown>): Promise<void>;
  updateSettings(source: "localSettings" | "userSettings", settings: Record<string, unknown>): Promise<void>;
  readFile(
    path: string,
    options?: { maxBytes?: number; encoding?: "utf-8" | "base64" },
  ): Promise<SDKControlReadFileResponse | null>;
  reloadPlugins(options?: Record<string, unknown>): Promise<SDKControlReloadPluginsResponse>;
  seedReadState(path: string, mtime: number): Promise<void>;
  reconnectMcpServer(serverName: string): Promise<void>;
  toggleMcpServer(serverName: string, enabled: boolean): Promise<void>;
  readMcpResource(serverName: string, uri: string): Promise<SDKControlMcpReadResourceResponse>;
  setMcpServers(servers: Record<string, McpServerConfig>): Promise<McpSetServersResult>;
  usage_EXPERIMENTAL_MAY_CHANGE_DO_NOT_RELY_ON_THIS_API_YET(options?: {
    skipBehaviors?: boolean;
  }): Promise<SDKControlGetUsageResponse>;
}

/**
 * How long an ended turn waits for its interrupted forks to report, before its result. A fork
 * ends within the pool's cancel grace once its thread runs, but a thread still starting (the
 * pool starts them with the first fork) takes seconds on a loaded machine.
 */
const FORK_SETTLE_MS = 30_000;

/** Why the running turn was aborted (R-L16: only SUBMIT_INTERRUPT_REASON leaves no notice). */
const HARD_INTERRUPT = "user_interrupt";
const OVER_BUDGET = "max_budget_usd";
const CLOSED = "query_closed";

/** The terminal reasons of a turn that ended on an API error (StopFailure fires, not Stop). */
const ENDS_ON_API_ERROR: ReadonlySet<Terminal["reason"]> = new Set([
  "model_error",
  "image_error",
  "prompt_too_long",
]);

/**
 * `query({ prompt, options })`, the Claude Agent SDK's entry point, without a process per
 * session: the session runs in this process on the orchestrator (its forks in the shared worker
 * pool), and every query of the process shares one pool and one API client (`shared-runtime.ts`).
 */
export function query(params: {
  prompt: string | AsyncIterable<SDKUserMessageInput>;
  options?: Options;
  /** forkloop: the runtime registry (tests use their own); default: the process's. */
  runtimes?: RuntimeRegistry;
}): Query {
  warnCanUseToolShadowed(params.options ?? {});
  return new QueryRun(params.prompt, params.options ?? {}, params.runtimes ?? processRuntimes);
}

function promptText(message: SDKUserMessageInput): string {
  const content = message.message.content;
  if (typeof content === "string") return content;
  return content
    .map((block) => (block.type === "text" ? block.text : ""))
    .filter((text) => text !== "")
    .join("\n");
}

class QueryRun implements Query {
  readonly #options: Options;
  readonly #runtimes: RuntimeRegistry;
  readonly #out = new AsyncChannel<SDKMessage>();
  readonly #warn: (line: string) => void;
  /** `debug` / `debugFile`: each yielded message's debug line. */
  readonly #debug: ((message: SDKMessage) => void) | undefined;
  /** Prompts waiting for a turn. */
  readonly #pending: PendingPrompt[] = [];
  /** R-L2: the running loop's queue; what it has not drained when the turn ends runs next. */
  readonly #queued: QueuedCommand[] = [];
  /** The queued prompts' uuids: the loop's user message for one is not yielded (the Agent SDK echoes no input). */
  readonly #queuedUuids = new Set<string>();
  /** R-X3: the input messages to echo back (replayUserMessages). */
  readonly #replay: UserMessageReplay;
  #inputEnded = false;
  #wakeDriver: (() => void) | undefined;
  #started = false;
  #closed = false;
  #turn: AbortController | undefined;
  #model: string | undefined;
  #permissionMode: PermissionMode | undefined;
  #setMode: ((mode: PermissionMode) => void) | undefined;
  /** The settings' bypass switch, once they are read (until then only the option is checked). */
  #bypassSettings: BypassSettings = { permissions: {} };
  #mcpStatus: () => McpServerStatus[] = () => [];
  /** The error the query ends with if nothing follows the last result (an error result's). */
  #lastError: ErrorResultError | undefined;
  /** R-K2: what the query had to say after its abortController aborted (the Agent SDK yields none of it). */
  readonly #afterAbort: SDKMessage[] = [];
  /** The running session and its forks' tracker, for the control methods (undefined before it starts). */
  #session:
    | { session: MainSession; tracker: SubAgentTracker; runtime: SharedRuntime; model: string }
    | undefined;
  /**
   * The auto-compact window the session runs with, once its options are resolved (the
   * CLAUDE_CODE_AUTO_COMPACT_WINDOW env wins over the option); getContextUsage measures on it.
   */
  #resolvedWindow: { readonly autoCompactWindow?: number } | undefined;
  /** Where the control methods' echoes go once the session runs (its id, the ordered output). */
  #live: { sessionId: string; emit: (message: SDKMessage) => void; client: Anthropic } | undefined;
  /** A bad `extraArgs`, thrown by the first `next()` (the Agent SDK fails when Claude Code starts). */
  readonly #optionsError: unknown;

  constructor(
    prompt: string | AsyncIterable<SDKUserMessageInput>,
    options: Options,
    runtimes: RuntimeRegistry,
  ) {
    let given = options;
    try {
      given = withExtraArgs(options);
    } catch (error) {
      this.#optionsError = error;
    }
    this.#options = given;
    this.#runtimes = runtimes;
    this.#replay = new UserMessageReplay(given.replayUserMessages === true);
    // Its notices name files and paths of the project: shown on a terminal escaped (R-S14).
    const stderr = given.stderr ?? ((line: string) => process.stderr.write(terminalText(line)));
    this.#warn = (line) => stderr(`${line}\n`);
    this.#debug = debugLog(given, stderr);
    // R-K1: an Agent SDK option forkloop cannot honour is an error here, at the query() call.
    checkAgentSdkOnlyOptions(given);
    if (typeof prompt === "string") {
      const expansion = given.promptExpansion;
      this.#pending.push({ text: prompt, ...(expansion === undefined ? {} : { expansion }) });
      this.#inputEnded = true;
    } else {
      void this.#pump(prompt, true);
    }
    given.abortController?.signal.addEventListener(
      "abort",
      () => {
        // Not yet handed out: held back with what follows, as the Agent SDK yields nothing more.
        this.#afterAbort.push(...this.#out.takeQueued());
        this.#abortTurn(HARD_INTERRUPT);
        // A driver waiting for background commands (R-T4) ends instead of waiting on.
        this.#wake();
      },
      { once: true },
    );
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<SDKMessage, void>> {
    if (!this.#started) {
      this.#started = true;
      this.#drive().then(
        () => this.#end(),
        (error: unknown) => this.#out.fail(error),
      );
    }
    const result = await this.#out.next();
    if (result.done !== true) this.#debug?.(result.value);
    return result;
  }

  async return(): Promise<IteratorResult<SDKMessage, void>> {
    this.close();
    return { done: true, value: undefined };
  }

  async throw(error: unknown): Promise<IteratorResult<SDKMessage, void>> {
    this.close();
    throw error;
  }

  async interrupt(): Promise<SDKControlInterruptResponse> {
    const waiting = this.#pending.length > 0 || this.#queued.length > 0;
    this.#abortTurn(waiting ? SUBMIT_INTERRUPT_REASON : HARD_INTERRUPT);
    // Prompts that joined the running turn and were not drained run next; so do waiting ones.
    return { still_queued: this.#queued.map((command) => command.uuid) };
  }

  async setPermissionMode(mode: PermissionMode): Promise<SDKControlSetPermissionModeResponse> {
    checkBypass(mode, this.#options, this.#bypassSettings);
    this.#permissionMode = mode;
    this.#setMode?.(mode);
    const live = this.#live;
    if (live !== undefined) live.emit(permissionModeStatus(mode, live.sessionId));
    return { mode };
  }

  async setModel(model?: string): Promise<void> {
    const live = this.#live;
    // Checked with the API first, as the Agent SDK does (a model it does not serve is refused here).
    if (model !== undefined && live !== undefined) await probeModel(live.client, model);
    this.#model = model;
    if (model !== undefined && live !== undefined) live.emit(modelSwitchEcho(model, live.sessionId));
  }

  async supportedCommands() {
    return supportedCommands();
  }

  async supportedModels() {
    return supportedModels();
  }

  async supportedAgents() {
    return supportedAgents(this.#options, this.#session?.session);
  }

  async accountInfo() {
    return accountInfo(this.#options, this.#session?.runtime.source.endpoint);
  }

  async initializationResult() {
    return initializeResponse(this.#options, this.#session?.session, this.#session?.runtime.source.endpoint);
  }

  async reinitialize() {
    return initializeResponse(this.#options, this.#session?.session, this.#session?.runtime.source.endpoint);
  }

  async getContextUsage() {
    const running = this.#session;
    return contextUsage(
      running?.session,
      this.#model ?? running?.model ?? this.#options.model ?? DEFAULT_MODEL,
      running?.runtime.source.modelOverrides ?? [],
      (this.#resolvedWindow ?? this.#options).autoCompactWindow,
    );
  }

  async stopTask(taskId: string): Promise<void> {
    // R-T4, R-T5: a background task's id (Bash's or a background Agent call's) stops it quietly —
    // a shell's whole process tree, a sub-agent's run; the model is not notified of its own stop.
    const shells = this.#session?.session.backgroundShells;
    if (shells?.get(taskId)?.status === "running") {
      await shells.stop(taskId);
      return;
    }
    if (this.#session?.tracker.stop(taskId) === true) return;
    throw new OptionsError(
      `stopTask: no sub-agent or background command "${taskId}" is running (task ids come from system/task_started or Bash's run_in_background result).`,
    );
  }

  async backgroundTasks(toolUseId?: string): Promise<boolean> {
    // R-T5: the main agent's running foreground Agent and Bash calls answer at once; their
    // sub-agents and commands go on as background tasks (a task notification when each ends).
    // False when none matched.
    return this.#session?.session.backgroundShells.moveToBackground(toolUseId) ?? false;
  }

  async rewindFiles(): Promise<RewindFilesResult> {
    return {
      canRewind: false,
      error: "forkloop keeps no file checkpoints (enableFileCheckpointing is not supported)",
    };
  }

  async reloadSkills(): Promise<SDKControlReloadSkillsResponse> {
    return {
      skills: (this.#session?.session.assembled.skills ?? []).map((skill) => ({
        name: skill.name,
        description: skill.description,
        argumentHint: "",
      })),
    };
  }

  async reloadOutputStyles(): Promise<SDKControlReloadOutputStylesResponse> {
    return { available_output_styles: ["default"] };
  }

  async setMcpPermissionModeOverride(): Promise<{ warning?: string }> {
    return refusedControl("setMcpPermissionModeOverride");
  }

  async setMaxThinkingTokens(): Promise<void> {
    refusedControl("setMaxThinkingTokens");
  }

  async applyFlagSettings(): Promise<void> {
    refusedControl("applyFlagSettings");
  }

  async updateSettings(): Promise<void> {
    refusedControl("updateSettings");
  }

  async readFile(): Promise<SDKControlReadFileResponse | null> {
    return refusedControl("readFile");
  }

  async reloadPlugins(): Promise<SDKControlReloadPluginsResponse> {
    return refusedControl("reloadPlugins");
  }

  async seedReadState(): Promise<void> {
    refusedControl("seedReadState");
  }

  async reconnectMcpServer(): Promise<void> {
    refusedControl("reconnectMcpServer");
  }

  async toggleMcpServer(): Promise<void> {
    refusedControl("toggleMcpServer");
  }

  async readMcpResource(): Promise<SDKControlMcpReadResourceResponse> {
    return refusedControl("readMcpResource");
  }

  async setMcpServers(): Promise<McpSetServersResult> {
    return refusedControl("setMcpServers");
  }

  async usage_EXPERIMENTAL_MAY_CHANGE_DO_NOT_RELY_ON_THIS_API_YET(): Promise<SDKControlGetUsageResponse> {
    return refusedControl("usage_EXPERIMENTAL_MAY_CHANGE_DO_NOT_RELY_ON_THIS_API_YET");
  }

  async mcpServerStatus() {
    return this.#mcpStatus();
  }

  async streamInput(stream: AsyncIterable<SDKUserMessageInput>): Promise<void> {
    await this.#pump(stream, false);
  }

  /**
   * The query's end, as the Agent SDK ends it: after the messages, an aborted query throws
   * AbortError and one whose last message is an error result throws that (error-result.ts).
   */
  #end(): void {
    if (this.#closed) return;
    if (this.#options.abortController?.signal.aborted) {
      // The Agent SDK's words: programs match on them (R-K2).
      const error = new AbortError("Claude Code process aborted by user");
      error.messagesAfterAbort = this.#afterAbort.splice(0);
      this.#out.fail(error);
    } else if (this.#lastError !== undefined) {
      this.#out.fail(this.#lastError);
    } else {
      this.#out.end();
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#abortTurn(CLOSED);
    this.#wake();
    this.#out.end();
  }

  #abortTurn(reason: string): void {
    this.#turn?.abort(reason);
  }

  #wake(): void {
    const wake = this.#wakeDriver;
    this.#wakeDriver = undefined;
    wake?.();
  }

  /** Streaming input: each message waits for a turn, or joins the running one (R-L2). */
  async #pump(stream: AsyncIterable<SDKUserMessageInput>, endsInput: boolean): Promise<void> {
    try {
      for await (const message of stream) {
        if (this.#closed) break;
        const pending = this.#replay.received(message, promptText(message));
        if (this.#turn !== undefined) {
          this.#queuedUuids.add(pending.uuid);
          this.#queued.push({ uuid: pending.uuid, content: pending.text, kind: "prompt" });
        } else {
          this.#pending.push(pending);
        }
        this.#wake();
      }
    } catch (error) {
      this.#warn(
        `forkloop: the prompt stream failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    } finally {
      if (endsInput) {
        this.#inputEnded = true;
        this.#wake();
      }
    }
  }

  /**
   * The next turn's prompt: the caller's input, else — R-T4, as Claude Code's `-p` does — the
   * notices of background commands that ended after the last turn, waiting for the ones still
   * running before the query may end. undefined: nothing more to do.
   */
  async #nextPrompt(shells?: BackgroundShells): Promise<PendingPrompt | undefined> {
    while (true) {
      if (this.#closed || this.#options.abortController?.signal.aborted) return undefined;
      const next = this.#pending.shift();
      if (next !== undefined) return next;
      const notices = shells?.takeNotices() ?? [];
      if (notices.length > 0)
        return { text: notices.map(taskNotificationText).join("\n\n"), taskNotification: true };
      if (this.#inputEnded && shells?.hasRunning() !== true) return undefined;
      let stopListening: (() => void) | undefined;
      await new Promise<void>((resolve) => {
        this.#wakeDriver = resolve;
        stopListening = shells?.onEnded(resolve);
      });
      stopListening?.();
    }
  }

  /** What a prompt asks for: a turn, or `/compact`; with `slashCommands: false` always a turn (R-X3). */
  #runRequest(text: string): RunRequest {
    return this.#options.slashCommands === false ? { kind: "prompt", prompt: text } : parseRunRequest(text);
  }

  async #drive(): Promise<void> {
    if (this.#optionsError !== undefined) throw this.#optionsError;
    if (this.#options.permissionPromptToolName !== undefined && this.#options.canUseTool !== undefined) {
      // The Agent SDK's words.
      throw new OptionsError(
        "canUseTool callback cannot be used with permissionPromptToolName. Please use one or the other.",
      );
    }
    const first = await this.#nextPrompt();
    if (first === undefined) return;
    // A bad slash command is refused before anything starts.
    this.#runRequest(first.text);
    const options = await withMainAgent(this.#options, this.#warn);
    // persistSession: false (`--no-session-persistence`): the session lives in a directory
    // removed when the query ends, so nothing is kept and it cannot be resumed.
    const ephemeral =
      this.#options.persistSession === false ? await mkdtemp(join(tmpdir(), "forkloop-session-")) : undefined;
    try {
      await this.#driveFrom(first, ephemeral === undefined ? options : { ...options, stateDir: ephemeral });
    } finally {
      if (ephemeral !== undefined) await rm(ephemeral, { recursive: true, force: true });
    }
  }

  async #driveFrom(first: PendingPrompt, options: Options): Promise<void> {
    const resolved = await resolveQueryOptions(options, this.#warn);
    this.#bypassSettings = resolved.settings;
    this.#resolvedWindow = resolved.loop;
    const sessionId =
      resolved.start === "fork"
        ? (await forkSessionIn(resolved.state, resolved.cwd, resolved.sessionId, options.resumeSessionAt))
            .sessionId
        : resolved.sessionId;
    // R-R5: one process per session, for its whole life — a second resume would answer the
    // first's open tool call and corrupt the transcript for every later resume.
    if (this.#options.repair === true && resolved.start !== "resume")
      throw new OptionsError("repair only applies with resume: it repairs that session's transcript.");
    const lock = await lockSession(resolved.sessionsDir, sessionId);
    if (lock.tookOver !== undefined) this.#warn(`forkloop: ${lock.tookOver}`);
    const releaseLock = once(() => lock.release());
    try {
      // Under the lock the run holds: a repair's lock released before the run would let another
      // process take the session in between (R-R5).
      if (this.#options.repair === true) await this.#repair(join(resolved.sessionsDir, `${sessionId}.fltr`));
      if (resolved.start === "resume") await unarchiveOnResume(resolved.sessionsDir, sessionId);
      // `title`: a new or forked session's, as renameSession gives it; a resumed one keeps its own.
      if (options.title !== undefined && resolved.start !== "resume")
        await writeSessionMetadata(resolved.sessionsDir, sessionId, {
          ...(await readSessionMetadata(resolved.sessionsDir, sessionId)),
          customTitle: options.title,
        });
      await this.#driveLocked(resolved, first, sessionId, releaseLock);
    } finally {
      await releaseLock();
    }
  }

  /** R-R4 `repair`: keep the intact records of a damaged transcript, say what was done. */
  async #repair(path: string): Promise<void> {
    const repaired = await repairTranscript(path);
    const records =
      repaired?.keptRecords === 1 ? "1 intact record" : `${repaired?.keptRecords} intact records`;
    this.#warn(
      repaired
        ? `forkloop: repaired ${path}: kept its ${records}; the damaged file is ${repaired.backupPath}`
        : `forkloop: ${path} is not damaged; nothing to repair`,
    );
  }

  async #driveLocked(
    resolved: ResolvedQuery,
    first: PendingPrompt,
    sessionId: string,
    releaseLock: () => Promise<void>,
  ): Promise<void> {
    const runtime = await this.#runtimes.acquire(resolved.env, this.#warn, resolved.cwd);
    try {
      // R-M1: the servers start once per session (in parallel) and serve its sub-agents too;
      // they are closed when it ends, however it ends.
      const mcp = await resolved.environment.startMcp(resolved.mcp, {
        resultsDir: join(resolved.sessionsDir, sessionId, "mcp-results"),
        deny: resolved.rules.deny,
        signal: this.#options.abortController?.signal,
      });
      const sources = new Map(resolved.mcp.entries.map((entry) => [entry.name, mcpServerSource(entry)]));
      this.#mcpStatus = () =>
        mcp.status().map((server) => {
          const source = sources.get(server.name);
          return source === undefined ? server : { ...server, source };
        });
      try {
        // Checked once the servers are up, before any request: a name no server offers is bad input.
        const promptToolName = this.#options.permissionPromptToolName;
        const promptTool =
          promptToolName === undefined ? undefined : permissionPromptTool(promptToolName, mcp.tools);
        const offered = mcp.tools.filter((tool) => tool !== promptTool);
        await this.#runSession(
          resolved,
          runtime,
          first,
          sessionId,
          [...resolved.tools, ...offered],
          promptTool,
        );
      } finally {
        await resolved.environment.close();
      }
    } finally {
      // The session is free to resume once its run has ended: releasing the shared runtime may
      // wait for a pool thread still loading (R-R5, R-V2).
      await releaseLock();
      await runtime.release();
    }
  }

  async #runSession(
    resolved: ResolvedQuery,
    runtime: SharedRuntime,
    first: PendingPrompt,
    sessionId: string,
    tools: readonly Tool[],
    promptTool: Tool | undefined,
  ): Promise<void> {
    const order = new ToolUseOrder((message) => {
      if (this.#closed) return;
      const stamped = withWrittenAt(message);
      this.#lastError = errorAfter(stamped);
      if (this.#options.abortController?.signal.aborted) this.#afterAbort.push(stamped);
      else this.#out.push(stamped);
    });
    const emit = (message: SDKMessage, after?: string) => order.emit(message, after);
    const agentTypes = new Map<string, string>();
    const toolInputs = new Map<string, Record<string, unknown>>();
    const subagentOpenings = new SubagentOpenings();
    const tracker = new SubAgentTracker({
      sessionId,
      cwd: resolved.cwd,
      emit,
      forwardText: this.#options.forwardSubagentText === true,
      toolInput: (toolUseId) => toolInputs.get(toolUseId),
      onStart: (start) => {
        // Compaction's own forks (the summary, session memory) start no sub-agent a hook hears
        // of; the summary's stop is a SubagentStop with an empty agent_type, as Claude Code's (R-X1).
        if (isCompactionFork(start.querySource)) {
          agentTypes.set(start.agentId, "");
          return;
        }
        agentTypes.set(start.agentId, start.agentType);
        // The sub-agent's first message follows its SubagentStart hooks (run by its runner).
        return start.opensWithSubagentStart ? subagentOpenings.opened(start.agentId) : undefined;
      },
    });
    const transcriptPath = `${resolved.sessionsDir}/${sessionId}.fltr`;
    // What a /compact's PreCompact and PostCompact hooks said, for the command's output line.
    const compactHooks = new CompactHookDisplay();
    const hookRunLines = hookRunMessages(
      this.#options.includeHookEvents === true,
      sessionId,
      emit,
      (toolUseId) => order.yielded(toolUseId),
    );
    const onHookRun: HookRunObserver = (report) => {
      compactHooks.hookRun(report);
      hookRunLines(report);
    };
    // The settings' MessageDisplay, PermissionRequest, StopFailure and SessionEnd hooks, which the
    // session fires (the loop's hooks are the others).
    const sessionEvents = sessionEventHooks(resolved.settings, {
      cwd: resolved.cwd,
      sessionId,
      transcriptPath,
      onNotice: this.#warn,
      onHookRun,
      promptId: () => callbacks.promptId(),
      effort: () => requestDefaults.effort,
      agentType: (agentId) => agentTypes.get(agentId),
    });
    const requestDefaults = withRequestDefaults(resolved, runtime.source.modelOverrides, {
      maxTurns: this.#options.maxTurns,
      tokenBudget: this.#options.tokenBudget,
      taskBudget: this.#options.taskBudget,
      effort: this.#options.effort,
    });
    const callbacks = new HookCallbacks(this.#options.hooks ?? {}, {
      sessionId,
      transcriptPath,
      cwd: resolved.cwd,
      subAgentTranscript: (agentId) => subAgentTranscriptPath(resolved.sessionsDir, sessionId, agentId),
      agentType: (agentId) => agentTypes.get(agentId),
      onError: this.#warn,
      toolUseYielded: (toolUseId) => order.yielded(toolUseId),
      effort: () => requestDefaults.effort,
      onRan: (event, ok, said) => compactHooks.ran(event, "callback", ok, said),
    });
    // R-S14: the main agent's checks read the session's live mode, as its sub-agents do.
    let liveMode = (): PermissionMode => resolved.permissionMode;
    const askContext = { mode: () => this.#permissionMode ?? resolved.permissionMode, cwd: resolved.cwd };
    // permissionPrompts "none" (`--permission-prompts none`): neither the program nor its prompt
    // tool is asked; what would prompt is denied, after the PermissionRequest hooks (R-X3).
    const programAsk =
      this.#options.permissionPrompts === "none"
        ? undefined
        : this.#options.canUseTool !== undefined
          ? askCaller(this.#options.canUseTool, askContext)
          : promptTool !== undefined
            ? promptToolAsk(promptTool, resolved.cwd)
            : undefined;
    const ask = withPermissionRequest(
      programAsk,
      { callbacks, settings: sessionEvents.permissionRequest },
      askContext,
    );
    const permissions = createHeadlessPermissions({
      mode: () => liveMode(),
      rules: resolved.rules,
      tools,
      cwd: resolved.cwd,
      home: resolved.home,
      ...(ask === undefined ? {} : { ask }),
      // Held by ToolUseOrder until the message holding the call is yielded, so it comes between
      // that message and the call's result, as in the Agent SDK.
      onUnanswered: (denial) => emit(permissionDeniedMessage(denial, sessionId)),
    });
    // The tools option as a list is the whole set, fork tools included (Claude Code's --tools).
    const selection = this.#options.tools;
    const removed = removedForkTools(resolved.rules.deny, Array.isArray(selection) ? selection : undefined);
    const additionalDirectories = [
      ...(resolved.settings.permissions.additionalDirectories ?? []),
      ...(this.#options.additionalDirectories ?? []),
    ];
    // R-T6: WebSearch's own requests cost too; they run in turns, after the writer below exists.
    let sideUsage: StreamJsonWriter | undefined;
    const session: MainSession = await createSession({
      onSideUsage: (model, usage) => sideUsage?.addSideUsage(model, usage),
      endpoint: runtime.source.endpoint,
      client: runtime.client,
      pool: tracker.wrap(runtime.pool),
      ...(this.#options.warmForkThread === true ? { warmPoolAtStart: true } : {}),
      cwd: resolved.cwd,
      sessionsDir: resolved.sessionsDir,
      resumeSessionId: sessionId,
      profile: agentProfile({
        model: resolved.model,
        fallbackModels: resolved.fallbackModels,
        modelOverrides: runtime.source.modelOverrides,
        permissionMode: resolved.permissionMode,
        permissionRules: resolved.rules,
        bash: resolved.bash,
        home: resolved.home,
        ...resolved.loop,
        limits: requestDefaults.limits,
        ...(requestDefaults.thinking === undefined ? {} : { thinking: requestDefaults.thinking }),
        ...(requestDefaults.effort === undefined ? {} : { effort: requestDefaults.effort }),
      }),
      ...(this.#options.outputFormat === undefined
        ? {}
        : { outputFormat: requestOutputFormat(this.#options.outputFormat) }),
      tools,
      removedTools: removed,
      canUseTool: permissions.canUseTool,
      agents: resolved.agents,
      modelEnv: resolved.modelEnv,
      requestDefaultsFor: requestDefaults.forModel,
      additionalDirectories,
      hooks: recordingHookDenials(
        subagentOpenings.marked(
          mergeHooks(
            settingsHooks(resolved.settings, {
              cwd: resolved.cwd,
              sessionId,
              transcriptPath,
              agentTranscriptPath: (agentId) =>
                subAgentTranscriptPath(resolved.sessionsDir, sessionId, agentId),
              agentType: (agentId) => agentTypes.get(agentId),
              onNotice: this.#warn,
              onHookRun,
              promptId: () => callbacks.promptId(),
              effort: () => requestDefaults.effort,
              toolUseYielded: (toolUseId) => order.yielded(toolUseId),
            }),
            callbacks.loopHooks(),
          ),
        ),
        permissions.recordDenial,
      ),
      ...(resolved.home === undefined ? {} : { home: resolved.home }),
      ...(resolved.memoryFiles ? {} : { memoryFiles: false }),
      ...(resolved.additionalDirectoryMemory && additionalDirectories.length > 0
        ? { memoryDirectories: additionalDirectories }
        : {}),
      ...(resolved.skillAndAgentFiles ? {} : { skillAndAgentFiles: false }),
      ...(resolved.skillNames === undefined ? {} : { skillNames: resolved.skillNames }),
      ...(resolved.systemPrompt === undefined ? {} : { systemPrompt: resolved.systemPrompt }),
      ...(resolved.appendSystemPrompt === undefined
        ? {}
        : { appendSystemPrompt: resolved.appendSystemPrompt }),
    });
    this.#session = { session, tracker, runtime, model: resolved.model };
    // R-T4: the main agent's background commands are tasks in the message stream, as Claude Code's.
    const untrackShells = tracker.trackShells(session.backgroundShells);
    this.#live = { sessionId, emit, client: runtime.client };
    liveMode = () => session.permissionMode();
    // R-S14: one store, the session's mode cell: the main agent's checks and every sub-agent read it.
    this.#setMode = (mode) => session.setPermissionMode(mode);
    // R-S8: project files the session did not read, each named once with the reason.
    for (const line of session.assembled.refused) this.#warn(line);
    if (session.droppedTornRecord) {
      // R-R4: said once; the record was cut by an interrupted write and is gone.
      this.#warn(
        `forkloop: ${session.transcriptPath} ended in a torn record (an interrupted write); it was dropped and the session continues from the record before it`,
      );
    }
    const writer = new StreamJsonWriter({
      sessionId,
      includePartialMessages: this.#options.includePartialMessages ?? false,
      modelOverrides: runtime.source.modelOverrides,
      toolOrigin: (name) => tools.find((tool) => tool.name === name)?.mcpOrigin,
    });
    sideUsage = writer;
    const toolNames = [
      ...tools.map((tool) => tool.name),
      ...(removed.includes("Agent") ? [] : ["Agent"]),
      ...(removed.includes("SendMessage") ? [] : ["SendMessage"]),
      ...(session.assembled.skills.length > 0 && !removed.includes("Skill") ? ["Skill"] : []),
    ];
    const agentNames = ["general-purpose", ...session.assembled.agentDefinitions.map((d) => d.name)];
    try {
      let prompt: PendingPrompt | undefined = first;
      while (prompt !== undefined) {
        const turnModel = this.#model ?? resolved.model;
        const permissionMode = this.#permissionMode ?? resolved.permissionMode;
        // The turn's init line follows its SessionStart and UserPromptSubmit hooks, as in the Agent SDK.
        const init = () =>
          emit(
            writer.init({
              cwd: resolved.cwd,
              tools: toolNames,
              model: turnModel,
              permissionMode,
              simulated: runtime.source.simulated,
              ...apiKeySourceOf(runtime.source.endpoint),
              mcpServers: this.#mcpStatus(),
              agents: [...new Set(agentNames)],
              skills: session.assembled.skills.map((skill) => skill.name),
              additionalDirectories,
              sandboxEnabled: resolved.bash.sandbox?.enabled === true,
            }),
          );
        callbacks.beginPrompt();
        const ended = await this.#turnOnce({
          session,
          writer,
          tracker,
          permissions,
          prompt,
          model: turnModel,
          permissionMode,
          init,
          emit,
          releaseHeld: () => order.flush(),
          toolInputs,
          displayed: sessionEvents.messageDisplay,
          compactHooks,
          failed: sessionEvents.stopFailure,
          failedCallbacks: callbacks.has("StopFailure")
            ? (failure) => callbacks.stopFailure(failure)
            : undefined,
        });
        if (ended) break;
        prompt = await this.#nextPrompt(session.backgroundShells);
      }
    } finally {
      this.#setMode = undefined;
      this.#session = undefined;
      // The session's close stops what still runs: no task messages after the query's end.
      untrackShells();
      await sessionEvents.sessionEnd?.("other");
      await callbacks.sessionEnd("other");
      await session.close();
    }
  }

  /** One turn (or `/compact`); true when the query must end after it. */
  async #turnOnce(turn: {
    session: MainSession;
    writer: StreamJsonWriter;
    tracker: SubAgentTracker;
    permissions: ReturnType<typeof createHeadlessPermissions>;
    prompt: PendingPrompt;
    model: string;
    permissionMode: PermissionMode;
    /** Emits the turn's `system/init` line. */
    init: () => void;
    emit: (message: SDKMessage) => void;
    /** What ToolUseOrder still holds (a tool_use whose message never completed). */
    releaseHeld: () => void;
    toolInputs: Map<string, Record<string, unknown>>;
    /** The settings' MessageDisplay hooks, for each reply of the main agent with text. */
    displayed: SessionEventHooks["messageDisplay"];
    /** Collects what a /compact's hooks said (its output line). */
    compactHooks: CompactHookDisplay;
    /** The settings' StopFailure hooks, for a turn that ends on an API error. */
    failed: SessionEventHooks["stopFailure"];
    /** The program's StopFailure callbacks (the Agent SDK names the error as its assistant message does). */
    failedCallbacks:
      | ((failure: { error: SDKAssistantMessageError; text: string }) => Promise<void>)
      | undefined;
  }): Promise<boolean> {
    const started = Date.now();
    const controller = new AbortController();
    this.#turn = controller;
    // A stop that came before the turn (while the MCP servers started) interrupts it at once.
    if (this.#options.abortController?.signal.aborted) controller.abort(HARD_INTERRUPT);
    try {
      const request = this.#runRequest(turn.prompt.text);
      const sessionId = turn.session.sessionId;
      const startTurn = () => {
        turn.init();
        const replay = this.#replay.take(turn.prompt.uuid, sessionId);
        if (replay !== undefined) turn.emit(replay);
      };
      if (request.kind === "compact") {
        // R-K2: Claude Code's order — a compacting status, the compaction (its hooks), the status
        // again with the outcome, then the turn's init, the boundary, the summary and the output.
        turn.emit(turn.writer.compactStatus());
        const logicalParentUuid = turn.session.history().at(-1)?.uuid;
        const compactStarted = Date.now();
        turn.compactHooks.start();
        let hookDisplay = "";
        const outcome = await turn.session
          .compact(request.instructions, { signal: controller.signal })
          .finally(() => {
            hookDisplay = turn.compactHooks.end();
          });
        const durationMs = Date.now() - compactStarted;
        turn.emit(turn.writer.compactStatus(outcome.ok ? "success" : "failed"));
        startTurn();
        // R-X1: a failed compaction is Claude Code's local command result saying so, not an error.
        const text = outcome.ok ? "" : `Error during compaction: ${outcome.error}`;
        if (outcome.ok) {
          const [first, summary] = turn.session.history();
          const lines = turn.writer.compactedLines({
            boundary: outcome.boundary,
            summary: first?.uuid === outcome.boundary.uuid && summary?.type === "user" ? summary : undefined,
            durationMs,
            logicalParentUuid,
            instructions: request.instructions,
            hookDisplay,
          });
          for (const line of lines) turn.emit(line);
        }
        turn.emit(
          turn.writer.compactResult(
            { text, usage: outcome.usage, costUsd: outcome.costUsd },
            { durationMs: Date.now() - started, model: turn.model, subagentStats: turn.tracker.stats() },
          ),
        );
        return false;
      }
      const budget = this.#options.maxBudgetUsd;
      const overBudget = () =>
        budget !== undefined && turn.writer.totalCostUsd() + turn.tracker.costUsd() >= budget;
      const events = turn.session.run(turn.prompt.text, {
        signal: controller.signal,
        queuedCommands: this.#queued,
        model: turn.model,
        permissionMode: turn.permissionMode,
        ...(turn.prompt.expansion === undefined ? {} : { expansion: turn.prompt.expansion }),
      });
      const turnId = randomUUID();
      let step = await events.next();
      startTurn();
      let apiError: Extract<LoopEvent, { type: "assistant" }> | undefined;
      while (!step.done) {
        const event: LoopEvent = step.value;
        if (event.type === "assistant") apiError = event.apiError === undefined ? undefined : event;
        rememberToolInputs(event, turn.toolInputs);
        // A message that joined the turn is the host's own: not printed, unless replayed as sent.
        const joined = event.type === "user" && this.#queuedUuids.delete(event.uuid);
        // A budget stop ends the turn at the reply that reached it: as Claude Code, what the
        // loop then records (the interrupted tools' results, the notice) is not yielded.
        const stopped = controller.signal.reason === OVER_BUDGET;
        const replay = joined ? this.#replay.take(event.uuid, sessionId) : undefined;
        if (replay !== undefined && !stopped) turn.emit(replay);
        for (const line of turn.writer.lines(event)) if (!joined && !stopped) turn.emit(line);
        if (event.type === "assistant" && overBudget()) controller.abort(OVER_BUDGET);
        // Before the loop goes on (its Stop hooks), as Claude Code shows a reply before it stops.
        if (event.type === "assistant" && turn.displayed !== undefined && !stopped)
          await displayReply(event, turnId, turn.displayed);
        step = await events.next();
      }
      const terminal: Terminal = step.value;
      // An API error ends the turn without the Stop hooks: StopFailure instead, as Claude Code's
      // (a withheld one too, once its recovery is spent: api-error-too-large).
      if (ENDS_ON_API_ERROR.has(terminal.reason) && apiError?.apiError !== undefined) {
        const text = replyText(apiError);
        await turn.failed?.({ error: stopFailureKind(apiError.apiError.status), text });
        await turn.failedCallbacks?.({ error: assistantErrorKind(apiError.apiError), text });
      }
      await turn.tracker.settled(FORK_SETTLE_MS);
      turn.releaseHeld();
      // Input that arrived too late for this turn's requests starts the next turn.
      this.#pending.unshift(
        ...this.#queued.splice(0).map((command) => ({ text: command.content, uuid: command.uuid })),
      );
      const result: SDKResultMessage = withStructuredOutput(
        turn.writer.result(terminal, {
          durationMs: Date.now() - started,
          permissionDenials: turn.permissions.denials(),
          subagents: turn.tracker.entries(),
          subagentStats: turn.tracker.stats(),
          ...(turn.prompt.taskNotification === true ? { fromTaskNotification: true } : {}),
          overBudget:
            controller.signal.reason === OVER_BUDGET || (terminal.reason === "completed" && overBudget()),
          ...(this.#options.maxTurns === undefined ? {} : { maxTurns: this.#options.maxTurns }),
          ...(budget === undefined ? {} : { maxBudgetUsd: budget }),
        }),
        this.#options.outputFormat,
      );
      turn.emit(result);
      return (
        result.subtype === "error_max_budget_usd" ||
        this.#options.abortController?.signal.aborted === true ||
        this.#closed
      );
    } finally {
      this.#turn = undefined;
    }
  }
}

/** MessageDisplay for a reply of the main agent that has text. */
async function displayReply(
  event: Extract<LoopEvent, { type: "assistant" }>,
  turnId: string,
  displayed: NonNullable<SessionEventHooks["messageDisplay"]>,
): Promise<void> {
  const text = replyText(event);
  if (text !== "") await displayed({ turnId, messageId: event.uuid, text });
}

/** A reply's text blocks, joined. */
function replyText(event: Extract<LoopEvent, { type: "assistant" }>): string {
  return event.message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
}

/** The tool calls' inputs (the Agent tool's description and run_in_background), for the forks they start. */
function rememberToolInputs(event: LoopEvent, inputs: Map<string, Record<string, unknown>>): void {
  if (event.type !== "assistant") return;
  for (const block of event.message.content)
    if (block.type === "tool_use") inputs.set(block.id, block.input as Record<string, unknown>);
}

/**
 * R-K2: the Agent SDK's announcement of a call refused without asking anyone (its reason type
 * `other`: a question turned into a refusal), with the refusal's words as forkloop's.
 */
function permissionDeniedMessage(
  denial: { toolName: string; toolUseId: string; agentId: string; message: string },
  sessionId: string,
): SDKMessage {
  return {
    type: "system",
    subtype: "permission_denied",
    tool_name: denial.toolName,
    tool_use_id: denial.toolUseId,
    ...(denial.agentId === "main" ? {} : { agent_id: denial.agentId }),
    decision_reason_type: "other",
    decision_reason: denial.message,
    message: denial.message,
    uuid: randomUUID(),
    session_id: sessionId,
  };
}

/** The Agent SDK's `canUseTool` as the permission checker's ask caller. */
function askCaller(
  canUseTool: CanUseTool,
  context: { mode: () => PermissionMode; cwd: string },
): LoopCanUseTool {
  return async (toolName, input, options) => {
    const answer = await canUseTool(
      toolName,
      input,
      canUseToolOptions(toolName, input, {
        signal: options.signal,
        toolUseId: options.toolUseId,
        agentId: options.agentId,
        ...(options.reason === undefined ? {} : { reason: options.reason }),
        ...(options.suggestedRule === undefined ? {} : { suggestedRule: options.suggestedRule }),
        mode: context.mode(),
        cwd: context.cwd,
      }),
    );
    if (answer.behavior === "allow") {
      const decidedBy = { source: savesRule(answer) ? "user_permanent" : "user_temporary" } as const;
      return answer.updatedInput === undefined
        ? { behavior: "allow", decidedBy }
        : { behavior: "allow", updatedInput: answer.updatedInput, decidedBy };
    }
    const decidedBy = { source: "user_reject" } as const;
    return answer.interrupt === true
      ? { behavior: "deny", message: answer.message, interrupt: true, decidedBy }
      : { behavior: "deny", message: answer.message, decidedBy };
  };
}

/** Settings files an answer's updatedPermissions can save a rule to (beyond this session). */
const SAVED_DESTINATIONS = new Set(["userSettings", "projectSettings", "localSettings"]);

/**
 * Whether canUseTool's allow is a lasting one (R-K2, tool_result_meta's `user_permanent`): it says
 * so (`decisionClassification`), or it saves a permission update to a settings file.
 */
function savesRule(answer: Extract<PermissionResult, { behavior: "allow" }>): boolean {
  if (answer.decisionClassification !== undefined) return answer.decisionClassification === "user_permanent";
  return (answer.updatedPermissions ?? []).some((update) => {
    const destination = (update as { destination?: unknown } | null)?.destination;
    return typeof destination === "string" && SAVED_DESTINATIONS.has(destination);
  });
}

/**
 * R-X2: the profile fields Claude Code's request defaults decide — the output cap, thinking
 * (unless the options or settings chose or turned it off) and effort (unless given) — and the
 * same choice for another model (a sub-agent's).
 */
function withRequestDefaults(
  resolved: ResolvedQuery,
  modelOverrides: readonly CatalogModelInfo[],
  given: {
    maxTurns: number | undefined;
    tokenBudget: number | undefined;
    taskBudget: Options["taskBudget"];
    effort: Options["effort"];
  },
): Pick<AgentProfileFields, "limits" | "thinking" | "effort"> & {
  readonly forModel: (model: string) => RequestDefaults;
} {
  const forModel = (model: string) =>
    claudeCodeRequestDefaults({
      model,
      modelOverrides,
      // Settings' env beneath the process's, as for every variable Claude Code reads.
      env: { ...resolved.settings.env, ...resolved.env },
      thinking: resolved.thinkingOff ? "off" : resolved.loop.thinking,
      effort: given.effort,
    });
  const defaults = forModel(resolved.model);
  return {
    forModel,
    limits: {
      maxTurns: given.maxTurns,
      tokenBudget: given.tokenBudget,
      ...(given.taskBudget === undefined ? {} : { taskBudget: { total: given.taskBudget.total } }),
      maxOutputTokens: defaults.maxOutputTokens,
    },
    ...(defaults.thinking === undefined ? {} : { thinking: defaults.thinking }),
    ...(defaults.effort === undefined ? {} : { effort: defaults.effort }),
  };
}

/** `fn` run at most once; later calls get the first call's promise. */
function once(fn: () => Promise<void>): () => Promise<void> {
  let called: Promise<void> | undefined;
  return () => {
    called ??= fn();
    return called;
  };
}
