/**
 * `@forkloop/sdk`: forkloop as a library. What makes a run behave like `claude -p` — settings
 * files and their rules and hooks, the headless permission policy, the endpoint (a real one, or
 * the embedded simulator, announced), and the stream-json messages — above the orchestrator.
 */
// Endpoint resolution, the models file, the fault spec and OptionsError (also a light subpath).

export { AbortError } from "./abort-error.js";
export { createHeadlessPermissions } from "./headless-permissions.js";
export {
  type GivenLoopChoices,
  type LoopChoices,
  MIN_THINKING_TOKENS,
  resolveLoopChoices,
  thinkingForBudget,
} from "./loop-choices.js";
export {
  type McpServersFor,
  type McpServersOnDemand,
  mcpServersOnDemand,
  type UnavailableMcpServer,
} from "./mcp-on-demand.js";
export {
  type McpServerSources,
  type NamedMcpServer,
  namedMcpServers,
  offeredMcpTools,
  type ResolvedMcpServers,
  resolveMcpServers,
  type SessionMcp,
  startSessionMcp,
} from "./mcp-servers.js";
export type {
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
  BaseHookInput,
  CanUseTool,
  HookCallback,
  HookCallbackMatcher,
  HookEvent,
  HookInput,
  HookJSONOutput,
  McpHttpServerConfig,
  McpSdkServerConfigWithInstance,
  McpServerConfig,
  McpSSEServerConfig,
  McpStdioServerConfig,
  Options,
  PermissionMode,
  PermissionResult,
  PostToolUseHookInput,
  PreCompactHookInput,
  PreToolUseHookInput,
  SessionStartHookInput,
  SettingSource,
  StopHookInput,
  SubagentStartHookInput,
  SubagentStopHookInput,
  SyncHookJSONOutput,
  SystemPromptOption,
  ThinkingConfig,
  UserPromptSubmitHookInput,
} from "./options.js";
export { HOOK_EVENTS } from "./options.js";
export {
  isInCheckout,
  isInsideProject,
  isOwnState,
  notOwnStateError,
  ownStateRecord,
  recordOwnState,
} from "./owned-state.js";
export { type McpServerStatus, type ModelInfo, type Query, query, type SlashCommand } from "./query.js";
export { bashToolOptions, refuseDisabledBypass } from "./query-options.js";
export { resolveSandbox } from "./sandbox.js";
export {
  type CallToolResult,
  createSdkMcpServer,
  type SdkMcpServer,
  type SdkMcpToolDefinition,
  type ToolAnnotations,
  tool,
} from "./sdk-mcp-server.js";
export {
  forkSession,
  getSessionMessages,
  listSessions,
  listSessionsIn,
  lockSession,
  newSessionId,
  type SessionInfo,
  type SessionInfo as SDKSessionInfo,
  savedSession,
  sessionLockPath,
} from "./session-helpers.js";
export { loadRunSettings, mergeRules, settingsHooks, toolHooks } from "./settings.js";
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
