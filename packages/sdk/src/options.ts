import type { PermissionMode, PromptExpansion, ThinkingConfigParam } from "@forkloop/loop-core";
import type {
  McpHttpServerConfig,
  McpSdkServerConfig,
  McpSseServerConfig,
  McpStdioServerConfig,
} from "@forkloop/mcp";
import type { SettingSource } from "@forkloop/tools";
import type { AgentSdkOnlyOptions } from "./agent-sdk-only-options.js";
import type {
  HookCallbackMatcher,
  HookEvent,
  PermissionDecisionClassification,
} from "./agent-sdk-types/hook-types.js";
import type { CanUseToolOptions } from "./can-use-tool-options.js";
import type { SdkMcpServer } from "./sdk-mcp-server.js";

export type { PermissionMode, SettingSource };

/** The Agent SDK's permission answer (`canUseTool`). */
export type PermissionResult =
  | {
      behavior: "allow";
      updatedInput?: Record<string, unknown>;
      updatedPermissions?: unknown[];
      toolUseID?: string;
      /** How the answer is reported (tool_result_meta): a lasting allow is `user_permanent`. */
      decisionClassification?: PermissionDecisionClassification;
    }
  | {
      behavior: "deny";
      message: string;
      interrupt?: boolean;
      toolUseID?: string;
      decisionClassification?: PermissionDecisionClassification;
    };

/**
 * The Agent SDK's `canUseTool`: asked for a call no rule or mode decided (reads in default mode
 * never ask). `agentID` is set for a sub-agent's call; `suggestions` are Claude Code's (the rule that
 * would allow the call, or acceptEdits for a file edit in default mode: can-use-tool-options.ts).
 */
export type CanUseTool = (
  toolName: string,
  input: Record<string, unknown>,
  options: CanUseToolOptions,
) => Promise<PermissionResult>;

export {
  type BaseHookInput,
  FIRED_HOOK_EVENTS,
  type FiredHookEvent,
  HOOK_EVENTS,
  type HookCallback,
  type HookCallbackMatcher,
  type HookEvent,
  type HookInput,
  type HookJSONOutput,
  type PostToolUseHookInput,
  type PreCompactHookInput,
  type PreToolUseHookInput,
  type SessionStartHookInput,
  type StopHookInput,
  type SubagentStartHookInput,
  type SubagentStopHookInput,
  type SyncHookJSONOutput,
  type UserPromptSubmitHookInput,
} from "./agent-sdk-types/hook-types.js";

/** The Agent SDK's sub-agent definition. */
export interface AgentDefinition {
  description: string;
  prompt: string;
  /** Built-in tool names it may use (default: all but Agent/Skill). */
  tools?: string[];
  disallowedTools?: string[];
  /** A model id, or `inherit`; a different model does not share the parent's prompt cache. */
  model?: string;
  maxTurns?: number;
}

/**
 * The MCP server configurations (R-M1): stdio, Streamable HTTP, legacy SSE, and in-process
 * servers — `createSdkMcpServer()`'s, or any `McpServer` of `@modelcontextprotocol/sdk` as
 * `{ type: "sdk", name, instance }` (the Agent SDK's shape). `timeout` is per call, in ms.
 */
export type McpServerConfig =
  | SdkMcpServer
  | McpSdkServerConfigWithInstance
  | McpStdioServerConfig
  | McpHttpServerConfig
  | McpSseServerConfig;

export type { McpHttpServerConfig, McpStdioServerConfig };
/** The Agent SDK spells it `McpSSEServerConfig`. */
export type McpSSEServerConfig = McpSseServerConfig;
export type McpSdkServerConfigWithInstance = {
  type: "sdk";
  name: string;
  instance: McpSdkServerConfig["instance"];
};

/** Extended thinking as the Messages API takes it (`adaptive`, `enabled` with a budget, `disabled`). */
export type ThinkingConfig = ThinkingConfigParam;

/** A custom prompt (a `string[]` is joined; see `SYSTEM_PROMPT_DYNAMIC_BOUNDARY`), or forkloop's own with more appended. */
export type SystemPromptOption =
  | string
  | string[]
  | { type: "preset"; preset: "claude_code"; append?: string };

/**
 * `query()`'s options: the Agent SDK's names and shapes. The Agent SDK's options forkloop cannot
 * honour are refused at the call (`agent-sdk-only-options.ts`); names it does not know at all are
 * ignored with one warning (on `stderr`), as the Agent SDK tolerates newer fields.
 */
export interface Options extends AgentSdkOnlyOptions {
  abortController?: AbortController;
  cwd?: string;
  additionalDirectories?: string[];
  /** Endpoint choice (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `FORKLOOP_*`) and `HOME`; default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Warnings and the simulator notice, one line each; default: process.stderr. */
  stderr?: (data: string) => void;
  model?: string;
  /** One model, or forkloop: several tried in order (R-L8). */
  fallbackModel?: string | string[];
  maxTurns?: number;
  maxBudgetUsd?: number;
  systemPrompt?: SystemPromptOption;
  /**
   * The tool set: names (the whole set — Agent, SendMessage and Skill only when named, as the
   * Agent SDK's), or the `claude_code` preset (all).
   */
  tools?: string[] | { type: "preset"; preset: "claude_code" };
  allowedTools?: string[];
  disallowedTools?: string[];
  permissionMode?: PermissionMode;
  allowDangerouslySkipPermissions?: boolean;
  canUseTool?: CanUseTool;
  /**
   * An MCP tool (`mcp__<server>__<tool>`) that answers each permission prompt the rules and the
   * mode leave open (`claude -p --permission-prompt-tool`): called with `{tool_name, input,
   * tool_use_id}`, it answers `{"behavior": "allow", "updatedInput": …}` or `{"behavior": "deny",
   * "message": …}` as JSON text. Not offered to the model; not with `canUseTool`.
   */
  permissionPromptToolName?: string;
  /**
   * Who answers a permission prompt the rules and the mode leave open (`claude -p
   * --permission-prompts`): "host" (default) — `canUseTool` or the `permissionPromptToolName`
   * tool, when given; "none" — nobody, so the call is denied at once and the model is told. A
   * PermissionRequest hook still decides first; "none" only ever denies.
   */
  permissionPrompts?: "host" | "none";
  /** Callbacks per event; events forkloop does not fire (not in FIRED_HOOK_EVENTS) are named once on `stderr`. */
  hooks?: Partial<Record<HookEvent, HookCallbackMatcher[]>>;
  agents?: Record<string, AgentDefinition>;
  mcpServers?: Record<string, McpServerConfig>;
  /** Only `mcpServers` (and forkloop's `mcpConfig` files): no servers from settings or `.mcp.json`. */
  strictMcpConfig?: boolean;
  /** forkloop: MCP config files (`{ "mcpServers": … }`, relative to `cwd`), as `--mcp-config`. */
  mcpConfig?: string[];
  resume?: string;
  /**
   * forkloop (R-R4, R-R5): with `resume`, first repair the session's damaged transcript (keep its
   * intact records, the damaged file kept beside it), under the lock the session is run under —
   * no other process can take the session between the repair and the run (`run --repair`).
   */
  repair?: boolean;
  continue?: boolean;
  forkSession?: boolean;
  /** The new session's id (a UUID, `claude --session-id`); not with resume or continue. */
  sessionId?: string;
  includePartialMessages?: boolean;
  /**
   * Each settings hook command's run as `system/hook_started` and `system/hook_response` messages
   * (its output, exit code and outcome), as Claude Code's `--include-hook-events`.
   */
  includeHookEvents?: boolean;
  /**
   * A sub-agent's text and thinking blocks too (its final reply included), as assistant messages
   * with `parent_tool_use_id`; by default only its tool calls and results, as Claude Code's.
   */
  forwardSubagentText?: boolean;
  /**
   * forkloop (R-X3, `claude --replay-user-messages`): each user message of a streaming `prompt` is
   * yielded back as sent (`isReplay: true`) when a turn takes it.
   */
  replayUserMessages?: boolean;
  /** Which settings files to read; default `[]` (none), as the Agent SDK. */
  settingSources?: SettingSource[];
  /**
   * One more settings file (a path, relative to `cwd`) or the settings themselves, read after
   * every settings file (it wins) and trusted as the user's own (`claude --settings`).
   */
  settings?: string | Record<string, unknown>;
  /**
   * forkloop (R-X3, `claude --bare`): a minimal session — no memory files (CLAUDE.md, AGENTS.md …)
   * in the system prompt and no settings hooks; the settings' permissions, env and model still
   * apply, and so do the program's own `hooks` callbacks. An `apiKeyHelper` counts only from the
   * `settings` option (R-X2), as Claude Code's --bare takes it only from `--settings`.
   */
  bare?: boolean;
  /**
   * forkloop (R-X3, `claude --safe-mode`): every customization off — `bare`'s (no memory files, no
   * settings hooks), and no skills, agent definitions or MCP servers from files or settings (the
   * program's own `agents`, `mcpServers` and `mcpConfig` stay); permissions and the model apply.
   */
  safeMode?: boolean;
  /**
   * forkloop (R-X3, `claude --disable-slash-commands`): false sends every prompt as written — a
   * leading `/name` (`/compact` too) is text for the model, not a command.
   */
  slashCommands?: boolean;
  /** forkloop: false leaves memory files (CLAUDE.md, AGENTS.md …) out of the system prompt (`claude --restricted`). */
  memoryFiles?: boolean;
  /**
   * forkloop (R-V2): start the worker thread forks run on as the session starts, not at its first
   * Agent or Skill call. `forkloop run` sets it: a one-shot process's first fork would otherwise
   * wait for a cold thread. Off by default: a program running many short sessions that never fork
   * would load a thread for each.
   */
  warmForkThread?: boolean;
  /** forkloop: a token target for each turn, e.g. 500_000 (R-L14). */
  tokenBudget?: number;
  /** forkloop (R-S5): take the project's own settings files as they are (else they only narrow). */
  trustProject?: boolean;
  /**
   * forkloop (R-X1): a string prompt is the expansion of a command typed as
   * `promptExpansion.typedPrompt` (`forkloop run "/review notes.txt"`): the model gets the prompt,
   * UserPromptSubmit and UserPromptExpansion hooks see it as typed, as Claude Code's do.
   */
  promptExpansion?: PromptExpansion;
  /** forkloop (R-S6): Bash in bubblewrap; default the settings' `sandbox`, else `auto` in dontAsk, `off` otherwise. */
  sandbox?: "auto" | "on" | "off";
  /**
   * R-X3: API betas sent in every request's `anthropic-beta` (e.g. `context-1m-2025-08-07`),
   * beside `ANTHROPIC_BETAS` and the betas forkloop's own features add.
   */
  betas?: string[];
  /** `output_config.effort` of the session's requests (the models that take it). */
  effort?: "low" | "medium" | "high" | "xhigh" | "max";
  /** Structured outputs: the final reply is JSON for `schema`, parsed into `result.structured_output`. */
  outputFormat?: { type: "json_schema"; schema: Record<string, unknown> };
  /** Extended thinking, as the Messages API takes it (e.g. `{ type: "enabled", budget_tokens: 4000 }`). */
  thinking?: ThinkingConfigParam;
  /**
   * forkloop: where this project's sessions are kept. Default `$FORKLOOP_HOME/projects/<project>`
   * (FORKLOOP_HOME defaults to `~/.forkloop`); sessions left in `<cwd>/.forkloop` are still found.
   */
  stateDir?: string;
  /** Extended thinking with this budget (≥ 1024; 0 = off), when `thinking` is not given. */
  maxThinkingTokens?: number;
  /** forkloop (R-L18): a small model summarizes each tool batch in the background. */
  toolUseSummaryModel?: string;
  /** forkloop (R-C2): the API clears old tool results (context editing) instead of the client. */
  contextEditing?: boolean;
  /**
   * forkloop (R-C7): the auto-compact window in tokens, at least 100000 (Claude Code's
   * `--autocompact N`): the auto-compact line and the hard limit are measured from
   * min(model's context window, this); the reported context window stays the model's.
   */
  autoCompactWindow?: number;
  /**
   * Claude Code CLI flags (without `--`; `null` for a flag without a value), read as the options
   * they stand for (`extra-args.ts`); a flag forkloop does not support is an error naming it.
   */
  extraArgs?: Record<string, string | null>;
}

/** Every option `query()` reads; anything else is warned about once and ignored. */
export const KNOWN_OPTIONS: ReadonlySet<string> = new Set<keyof Options>([
  "abortController",
  "cwd",
  "additionalDirectories",
  "env",
  "stderr",
  "model",
  "fallbackModel",
  "maxTurns",
  "maxBudgetUsd",
  "systemPrompt",
  "tools",
  "allowedTools",
  "disallowedTools",
  "permissionMode",
  "allowDangerouslySkipPermissions",
  "canUseTool",
  "permissionPromptToolName",
  "permissionPrompts",
  "hooks",
  "agents",
  "mcpServers",
  "strictMcpConfig",
  "mcpConfig",
  "resume",
  "repair",
  "continue",
  "forkSession",
  "sessionId",
  "includePartialMessages",
  "includeHookEvents",
  "forwardSubagentText",
  "replayUserMessages",
  "settingSources",
  "tokenBudget",
  "warmForkThread",
  "bare",
  "memoryFiles",
  "safeMode",
  "slashCommands",
  "trustProject",
  "promptExpansion",
  "sandbox",
  "settings",
  "thinking",
  "effort",
  "betas",
  "outputFormat",
  "stateDir",
  "maxThinkingTokens",
  "toolUseSummaryModel",
  "contextEditing",
  "autoCompactWindow",
  "extraArgs",
  // R-K1: the Agent SDK's options forkloop acts on, refuses or takes as having no effect
  // (agent-sdk-only-options.ts) — none of them is ignored without a word.
  "agent",
  "debug",
  "debugFile",
  "enableFileCheckpointing",
  "executable",
  "executableArgs",
  "pathToClaudeCodeExecutable",
  "persistSession",
  "plugins",
  "resumeSessionAt",
  "skills",
  "spawnClaudeCodeProcess",
  "taskBudget",
  "title",
]);
