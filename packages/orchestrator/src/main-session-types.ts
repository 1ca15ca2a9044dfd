import type Anthropic from "@anthropic-ai/sdk";
import type { CompactionEvent, CompactSource } from "@forkloop/compaction";
import type {
  CacheSafeParams,
  CanUseTool,
  LoopEvent,
  LoopHooks,
  Message,
  ModelAliasEnv,
  OutputConfig,
  PermissionMode,
  PromptExpansion,
  QueuedCommand,
  SystemMessage,
  Terminal,
  Tool,
  UsageTotals,
} from "@forkloop/loop-core";
import type { BackgroundShells } from "@forkloop/tools";
import type { AgentDefinition } from "./agent-definitions.js";
import type { AgentPool } from "./agent-pool.js";
import type { AgentProfile } from "./agent-profile.js";
import type { ModelRequestDefaults } from "./fork-tool-support.js";
import type { AssembledSession } from "./session-assembly.js";
import type { ModelEndpoint, SubAgentEvent } from "./sub-agent-types.js";

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
   * sub-agents too: their calls come back over comlink (R-M1).
   */
  readonly tools?: readonly Tool[];
  /** Fork tools not to add (a bare deny rule `Agent` / `Skill` removes the tool, as for built-ins). */
  readonly removedTools?: readonly ("Agent" | "SendMessage" | "Skill")[];
  /** Permission decisions of the main agent and of its sub-agents' asks. Default: allow. */
  readonly canUseTool?: CanUseTool;
  /** Share a pool (e.g. with a batch); otherwise the session creates one and closes it. */
  readonly pool?: AgentPool;
  /**
   * R-V2: with a shared `pool` and the Agent or Skill tool, start loading the pool's first thread
   * as the session starts, not when a reply first calls one: for a process that runs this one
   * session (`forkloop run`), whose first fork would otherwise wait for a cold thread. Off by
   * default: a program running many short sessions would load threads they never use.
   */
  readonly warmPoolAtStart?: boolean;
  readonly appendSystemPrompt?: string;
  /** Replaces forkloop's identity and working rules in the system prompt (the Agent SDK's string `systemPrompt`). */
  readonly systemPrompt?: string;
  readonly home?: string;
  /** False: the system prompt holds no memory files (CLAUDE.md …), as Claude Code's `--bare`. */
  readonly memoryFiles?: boolean;
  /** Directories besides the project whose memory files are read too (`--add-dir` under CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD=1). */
  readonly memoryDirectories?: readonly string[];
  /** False: no skills and no agent definitions from disk, as Claude Code's `--safe-mode`. */
  readonly skillAndAgentFiles?: boolean;
  /**
   * R-K1: only these skills (by name) are the session's — in the model's listing and the Skill
   * tool's — as the Agent SDK's `skills` list; none with `[]`. Default: every skill found.
   */
  readonly skillNames?: readonly string[];
  readonly agents?: readonly AgentDefinition[];
  /**
   * R-X2: the run's environment (`query()`'s `env`, the CLI's process env) Claude Code's aliases
   * resolve in — agent files' `model` and an Agent call's (`ANTHROPIC_DEFAULT_HAIKU_MODEL` …);
   * the session's git status prefetch finds git on its PATH (R-S7).
   */
  readonly modelEnv?: ModelAliasEnv;
  /** R-X2: a model's request defaults, for a sub-agent on another model (ForkToolOptions). */
  readonly requestDefaultsFor?: (model: string) => ModelRequestDefaults;
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
  /**
   * R-T6: the usage of requests the session's tools send on their own (WebSearch's), with the
   * model each named, for the caller's cost ledger.
   */
  readonly onSideUsage?: (model: string, usage: Anthropic.Messages.Usage) => void;
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
  /** The command `prompt` expanded from, as typed: the prompt hooks see it (R-X1). */
  readonly expansion?: PromptExpansion;
}

export interface MainSession {
  readonly sessionId: string;
  readonly transcriptPath: string;
  /** R-R4: the resumed transcript ended in a torn record (an interrupted write); it was dropped. */
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
  /**
   * R-T4: the main agent's background shells (Bash `run_in_background`). A shell that ends during
   * a turn is told to the model between its tool turns; one that ends later waits in
   * `takeNotices()` for the caller's next turn. `close()` stops every one still running.
   */
  readonly backgroundShells: BackgroundShells;
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
