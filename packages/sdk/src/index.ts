/**
 * `@forkloop/sdk`: forkloop as a library. What makes a run behave like `claude -p` — settings
 * files and their rules and hooks, the headless permission policy, the endpoint (a real one, or
 * the embedded simulator, announced), and the stream-json messages — above the orchestrator.
 */
// Endpoint resolution, the models file, the fault spec and OptionsError (also a light subpath).

export { AbortError } from "./abort-error.js";
export {
  BUILTIN_TOOL_NAMES,
  EXIT_REASONS,
  type ExitReason,
  LEGACY_TOOL_NAME_ALIASES,
  ORG_POLICY_LIMIT_PREFIXES,
  SYSTEM_PROMPT_DYNAMIC_BOUNDARY,
  USAGE_LIMIT_ERROR_PREFIXES,
  USAGE_TRANSITION_PREFIXES,
  USAGE_WARNING_PREFIXES,
} from "./agent-sdk-constants.js";
// The Agent SDK's type surface (message kinds forkloop does not yield, hook events and outputs,
// control responses, option types), so programs written for it compile unchanged.
export type * from "./agent-sdk-types/control-types.js";
export type * from "./agent-sdk-types/hook-types.js";
export type * from "./agent-sdk-types/option-types.js";
export type * from "./agent-sdk-types/other-messages.js";
export { damageNotice, describeError, type ErrorDescription } from "./describe-error.js";
export { ErrorResultError } from "./error-result.js";
export { createHeadlessPermissions } from "./headless-permissions.js";
export {
  type AutoCompactWindowEnv,
  autoCompactWindowFromEnv,
  type GivenLoopChoices,
  type LoopChoices,
  MIN_THINKING_TOKENS,
  resolveLoopChoices,
  thinkingForBudget,
} from "./loop-choices.js";
export type {
  McpServersFor,
  McpServersOnDemand,
  UnavailableMcpServer,
} from "./mcp-on-demand.js";
export {
  type McpServerSources,
  type NamedMcpServer,
  namedMcpServers,
  offeredMcpTools,
  type ResolvedMcpServers,
  type SessionMcp,
} from "./mcp-servers.js";
export type {
  ForkloopMessage,
  ModelUsage,
  NonNullableUsage,
  SDKAPIRetryMessage,
  SDKAssistantMessage,
  SDKCompactBoundaryMessage,
  SDKMessage,
  SDKModelFallbackMessage,
  SDKPartialAssistantMessage,
  SDKPermissionDenial,
  SDKResultError,
  SDKResultMessage,
  SDKResultSuccess,
  SDKSystemMessage,
  SDKTaskNotificationMessage,
  SDKTaskProgressMessage,
  SDKTaskStartedMessage,
  SDKTombstoneMessage,
  SDKUserMessage,
  SDKUserMessageInput,
} from "./messages.js";
export * from "./model-endpoint-entry.js";
export type {
  AgentDefinition,
  CanUseTool,
  McpHttpServerConfig,
  McpSdkServerConfigWithInstance,
  McpServerConfig,
  McpSSEServerConfig,
  McpStdioServerConfig,
  Options,
  PermissionMode,
  PermissionResult,
  SettingSource,
  SystemPromptOption,
  ThinkingConfig,
} from "./options.js";
export { FIRED_HOOK_EVENTS, HOOK_EVENTS } from "./options.js";
export {
  isInCheckout,
  isInsideProject,
  isOwnState,
  notOwnStateError,
  ownStateRecord,
  recordOwnState,
} from "./owned-state.js";
export { type Query, query } from "./query.js";
export { bashToolOptions, refuseDisabledBypass } from "./query-options.js";
export { type RunEnvironment, resolveRunEnvironment } from "./run-environment.js";
export {
  type CallToolResult,
  createSdkMcpServer,
  type SdkMcpServer,
  type SdkMcpToolDefinition,
  type ToolAnnotations,
  tool,
} from "./sdk-mcp-server.js";
export {
  type ForkSessionOptions,
  type ForkSessionResult,
  forkSession,
  type GetSessionMessagesOptions,
  getSessionMessages,
  type ListSessionsOptions,
  listSessions,
  listSessionsIn,
  lockSession,
  newSessionId,
  type SessionInfo,
  type SessionInfo as SDKSessionInfo,
  type SessionMessage,
  savedSession,
  sessionLockPath,
} from "./session-helpers.js";
export {
  archiveSession,
  deleteSession,
  type GetSessionInfoOptions,
  type GetSubagentMessagesOptions,
  getSessionInfo,
  getSubagentMessages,
  type ListSubagentsOptions,
  listSubagents,
  renameSession,
  type SessionMutationOptions,
  tagSession,
  unarchiveSession,
} from "./session-management.js";
export {
  foldSessionSummary,
  type ImportSessionToStoreOptions,
  InMemorySessionStore,
  importSessionToStore,
  type SessionKey,
  type SessionStore,
  type SessionStoreEntry,
  type SessionStoreFlush,
  type SessionSummaryEntry,
} from "./session-store.js";
export { mergeRules, settingsHooks, toolHooks } from "./settings.js";
export {
  type DeniedModelsMatch,
  filterEscalatingDefaultMode,
  matchDeniedModels,
  type ProvenanceEntry,
  type ResolvedSettingSource,
  type ResolvedSettings,
  type ResolveSettingsOptions,
  resolveSettings,
} from "./settings-resolution.js";
export { RuntimeRegistry, type SharedRuntime } from "./shared-runtime.js";
export { parseRunRequest, type RunRequest, SLASH_COMMANDS } from "./slash-commands.js";
export {
  batchesDir,
  batchesDirs,
  checkId,
  checkProjectDir,
  ensureWritableDir,
  type ProjectState,
  type ProjectStateOptions,
  projectKey,
  projectState,
  sessionsDir,
  sessionsDirs,
} from "./state-dirs.js";
export {
  apiRetryLineSchema,
  assistantLineSchema,
  compactBoundaryLineSchema,
  modelFallbackLineSchema,
  type ResultLine,
  resultLineSchema,
  resultSubtypeSchema,
  type StreamJsonLine,
  type SubagentUsage,
  streamEventLineSchema,
  streamJsonLineSchema,
  subagentUsageSchema,
  systemInitLineSchema,
  taskNotificationLineSchema,
  taskProgressLineSchema,
  taskStartedLineSchema,
  tombstoneLineSchema,
  userLineSchema,
} from "./stream-json.js";
export { type PermissionDenialRecord, StreamJsonWriter } from "./stream-json-writer.js";
export {
  builtinToolNames,
  DEFAULT_MODEL,
  FORK_TOOL_NAMES,
  type PermissionRules,
  removedForkTools,
  selectTools,
} from "./tool-selection.js";
export { FORKLOOP_VERSION } from "./version.js";
export { type ClaimOptions, prewarm, type SpareProcess, startup, type WarmQuery } from "./warm-start.js";
