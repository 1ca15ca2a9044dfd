import type { PermissionMode } from "@forkloop/loop-core";
import type { ModelUsage } from "../messages.js";
import type { McpServerConfigForProcessTransport } from "./option-types.js";
import type {
  ExtraUsage,
  FastModeDisabledReason,
  FastModeState,
  SDKSettingsParseError,
} from "./other-messages.js";

/**
 * What the `Query` control methods answer (the Agent SDK's control-protocol responses): forkloop
 * answers those it implements with these shapes; ../query-control.ts says which it refuses.
 */
export type { ModelUsage };

export type EffortLevel = "low" | "medium" | "high" | "xhigh" | "max";

/** `supportedModels()`'s entries. */
export interface ModelInfo {
  value: string;
  resolvedModel?: string;
  displayName: string;
  description: string;
  supportsEffort?: boolean;
  supportedEffortLevels?: EffortLevel[];
  supportsAdaptiveThinking?: boolean;
  supportsFastMode?: boolean;
  supportsAutoMode?: boolean;
}

/** `supportedCommands()`'s entries. */
export interface SlashCommand {
  name: string;
  description: string;
  argumentHint: string;
  aliases?: string[];
  builtin?: boolean;
}

/** `supportedAgents()`'s entries. */
export interface AgentInfo {
  name: string;
  description: string;
  model?: string;
}

/** `accountInfo()`: who pays for the requests. */
export interface AccountInfo {
  email?: string;
  organization?: string;
  subscriptionType?: string;
  tokenSource?: string;
  apiKeySource?: string;
  apiProvider?:
    | "firstParty"
    | "bedrock"
    | "vertex"
    | "foundry"
    | "anthropicAws"
    | "anthropicGoogleCloud"
    | "mantle"
    | "gateway";
}

export type McpClaudeAIProxyServerConfig = {
  type: "claudeai-proxy";
  url: string;
  id: string;
  timeout?: number;
};
export type McpServerStatusConfig = McpServerConfigForProcessTransport | McpClaudeAIProxyServerConfig;

/** `mcpServerStatus()`'s entries; `error` says why a server failed. */
export interface McpServerStatus {
  name: string;
  status: "connected" | "failed" | "needs-auth" | "pending" | "disabled" | "closed";
  serverInfo?: { name: string; version: string };
  error?: string;
  config?: McpServerStatusConfig;
  scope?: string;
  source?: string;
  tools?: {
    name: string;
    description?: string;
    annotations?: { readOnly?: boolean; destructive?: boolean; openWorld?: boolean };
    _meta?: Record<string, unknown>;
  }[];
}

export interface McpServerProvenance {
  name: string;
  source: string;
}

export interface McpServerToolPolicy {
  name: string;
  permission_policy?: "always_allow" | "always_ask" | "always_deny";
  org_max_permission?: "allow" | "ask" | "blocked";
}

/** `setMcpServers()`'s answer. */
export interface McpSetServersResult {
  added: string[];
  removed: string[];
  errors: Record<string, string>;
}

/** `rewindFiles()`'s answer. */
export interface RewindFilesResult {
  canRewind: boolean;
  error?: string;
  filesChanged?: string[];
  insertions?: number;
  deletions?: number;
  skippedLinks?: number;
}

/** `initializationResult()`: what the session offers, as it starts. */
export interface SDKControlInitializeResponse {
  commands: SlashCommand[];
  agents: AgentInfo[];
  output_style: string;
  available_output_styles: string[];
  models: ModelInfo[];
  account: AccountInfo;
  hooks_applied?: boolean;
  hook_on_failure_supported?: boolean;
  plugins_applied?: boolean;
  mcp_servers_applied?: boolean;
  sdk_mcp_manifests_parked?: Record<
    string,
    "parked" | "already_connected" | "protocol_version_mismatch" | "malformed" | "not_honoured"
  >;
  claude_code_version?: string;
  fast_mode_state?: FastModeState;
  fast_mode_disabled_reason?: FastModeDisabledReason;
}

export interface SDKContextUsageCategory {
  name: string;
  tokens: number;
  kind: "used" | "free" | "buffer" | "deferred";
}

/** The context window's use, by part (the snake_case form some messages carry). */
export interface SDKContextUsage {
  model: string;
  total_tokens: number;
  raw_max_tokens: number;
  percentage: number;
  over_limit?: { tokens_over: number; kind: "hard_limit" | "compaction_window" };
  categories: SDKContextUsageCategory[];
  mcp_tools: { name: string; server_name: string; tokens: number }[];
  memory_files: { path: string; type: string; tokens: number }[];
  agents: { agent_type: string; source: string; tokens: number }[];
  skills?: { name: string; source: string; plugin_name?: string; tokens: number }[];
}

/** `getContextUsage()`: the context window's use, by part. */
export interface SDKControlGetContextUsageResponse {
  categories: {
    id?:
      | "system_prompt"
      | "system_tools"
      | "mcp_tools"
      | "mcp_instructions"
      | "mcp_tools_deferred"
      | "system_tools_deferred"
      | "custom_agents"
      | "memory_files"
      | "skills"
      | "messages"
      | "autocompact_buffer"
      | "compact_buffer"
      | "free_space";
    name: string;
    tokens: number;
    color: string;
    isDeferred?: boolean;
    kind: "used" | "free" | "buffer" | "deferred";
  }[];
  totalTokens: number;
  maxTokens: number;
  rawMaxTokens: number;
  percentage: number;
  gridRows: {
    color: string;
    isFilled: boolean;
    categoryName: string;
    tokens: number;
    percentage: number;
    squareFullness: number;
  }[][];
  model: string;
  memoryFiles: { path: string; type: string; tokens: number }[];
  mcpTools: { name: string; serverName: string; tokens: number; isLoaded?: boolean }[];
  mcpInstructions?: { serverName: string; tokens: number }[];
  deferredBuiltinTools?: { name: string; tokens: number; isLoaded: boolean }[];
  systemTools?: { name: string; tokens: number }[];
  systemPromptSections?: { name: string; tokens: number }[];
  agents: { agentType: string; source: string; pluginId?: string; path?: string; tokens: number }[];
  slashCommands?: { totalCommands: number; includedCommands: number; tokens: number };
  skills?: {
    totalSkills: number;
    includedSkills: number;
    tokens: number;
    skillFrontmatter: {
      name: string;
      source: string;
      pluginName?: string;
      pluginId?: string;
      path?: string;
      tokens: number;
    }[];
  };
  autoCompactThreshold?: number;
  isAutoCompactEnabled: boolean;
  messageBreakdown?: {
    toolCallTokens: number;
    toolResultTokens: number;
    attachmentTokens: number;
    assistantMessageTokens: number;
    userMessageTokens: number;
    redirectedContextTokens: number;
    unattributedTokens: number;
    toolCallsByType: { name: string; callTokens: number; resultTokens: number }[];
    attachmentsByType: { name: string; tokens: number }[];
  };
  apiUsage: {
    input_tokens: number;
    output_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
  } | null;
}

type Window = { utilization: number | null; resets_at: string | null } | null;

/** `getUsage()`: the session's spend, and the account's plan limits (none on an API key). */
export interface SDKControlGetUsageResponse {
  session: {
    total_cost_usd: number;
    total_api_duration_ms: number;
    total_duration_ms: number;
    total_lines_added: number;
    total_lines_removed: number;
    model_usage: Record<string, ModelUsage>;
  };
  subscription_type: string | null;
  rate_limits_available: boolean;
  rate_limits: {
    five_hour?: Window;
    seven_day?: Window;
    seven_day_oauth_apps?: Window;
    seven_day_opus?: Window;
    seven_day_sonnet?: Window;
    model_scoped?: { display_name: string; utilization: number | null; resets_at: string | null }[];
    extra_usage?: ExtraUsage | null;
  } | null;
  /** Claude Code's usage-pattern analysis; forkloop has none. */
  behaviors: Record<string, unknown> | null;
}

/** `interrupt()`'s answer: the queued prompts still waiting (by uuid). */
export interface SDKControlInterruptResponse {
  still_queued: string[];
  cancelled?: string[];
}

export interface SDKControlSetPermissionModeResponse {
  mode?: PermissionMode;
}

export interface SDKPermissionRuleDescription {
  prefix: string;
  emphasis?: string;
  suffix?: string;
}

export interface SDKPermissionRuleEntry {
  behavior: "allow" | "deny" | "ask";
  source:
    | "userSettings"
    | "projectSettings"
    | "localSettings"
    | "flagSettings"
    | "policySettings"
    | "cliArg"
    | "command"
    | "session"
    | "mcpMount"
    | "toolsNarrowing"
    | "mcpServerPolicy"
    | "hostCredential";
  rule: string;
  description?: SDKPermissionRuleDescription;
  editability: "persistent" | "session" | "readonly";
  notInEffect?: boolean;
}

export interface SDKPermissionWorkspaceDirectory {
  path: string;
  source: string;
}

export interface SDKControlPermissionRulesState {
  rules: SDKPermissionRuleEntry[];
  workspaceDirectories: SDKPermissionWorkspaceDirectory[];
  originalCwd: string;
  managedOnly: boolean;
  errors?: SDKSettingsParseError[];
  withheld?: boolean;
}

export interface SDKControlListPermissionRulesResponse {
  state: SDKControlPermissionRulesState;
}

export interface SDKControlMcpReadResourceResponse {
  contents: {
    uri: string;
    mimeType?: string;
    text?: string;
    blob?: string;
    _meta?: Record<string, unknown>;
  }[];
}

export interface SDKControlReadFileResponse {
  contents: string;
  absPath: string;
  truncated?: boolean;
  encoding?: "base64";
  lossy?: boolean;
}

export interface SDKControlReloadOutputStylesResponse {
  available_output_styles: string[];
}

export interface SDKControlReloadPluginsResponse {
  commands: SlashCommand[];
  agents: AgentInfo[];
  plugins: { name: string; path: string; source?: string; version?: string }[];
  mcpServers: McpServerStatus[];
  error_count: number;
  held?: boolean;
  cache_impact?: {
    mcp_servers_added: string[];
    mcp_servers_removed: string[];
    lsp_tool_change: ("adds" | "may-add" | "removes" | "may-remove") | null;
  };
}

export interface SDKControlReloadSkillsResponse {
  skills: SlashCommand[];
}

/** Claude Code's control protocol envelopes (a request to the process, its answer). */
export interface SDKControlRequest {
  type: "control_request";
  request_id: string;
  request: { subtype: string; [key: string]: unknown };
}
export interface SDKControlResponse {
  type: "control_response";
  response:
    | { subtype: "success"; request_id: string; response?: Record<string, unknown> }
    | { subtype: "error"; request_id: string; error: string };
}
