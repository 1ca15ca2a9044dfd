// A module re-exporting every type the Agent SDK declares (as a wrapper library or a framework
// adapter does), and a message renderer that handles every kind of message the SDK's SDKMessage
// union names, exhaustively (a kind the union gains or lacks is a compile error).
export type {
  AccountInfo,
  AgentDefinition,
  AgentInfo,
  AgentMcpServerSpec,
  AnyZodRawShape,
  ApiKeySource,
  AsyncHookJSONOutput,
  BackgroundTaskSummary,
  BaseHookInput,
  BaseOutputFormat,
  CanUseTool,
  ClaimOptions,
  ConfigChangeHookInput,
  ConfigScope,
  CwdChangedHookInput,
  CwdChangedHookSpecificOutput,
  DeniedModelsMatch,
  DirectoryAddedHookInput,
  EffortLevel,
  ElicitationHookInput,
  ElicitationHookSpecificOutput,
  ElicitationRequest,
  ElicitationResult,
  ElicitationResultHookInput,
  ElicitationResultHookSpecificOutput,
  ExitReason,
  FastModeDisabledReason,
  FastModeState,
  FileChangedHookInput,
  FileChangedHookSpecificOutput,
  ForkSessionOptions,
  ForkSessionResult,
  GetSessionInfoOptions,
  GetSessionMessagesOptions,
  GetSubagentMessagesOptions,
  HookCallback,
  HookCallbackMatcher,
  HookEvent,
  HookInput,
  HookJSONOutput,
  HookPermissionDecision,
  ImportSessionToStoreOptions,
  InferShape,
  InstructionsLoadedHookInput,
  JsonSchemaOutputFormat,
  ListSessionsOptions,
  ListSubagentsOptions,
  McpClaudeAIProxyServerConfig,
  McpHttpServerConfig,
  McpSdkServerConfig,
  McpSdkServerConfigWithInstance,
  McpServerConfig,
  McpServerConfigForProcessTransport,
  McpServerProvenance,
  McpServerStatus,
  McpServerStatusConfig,
  McpServerToolPolicy,
  McpSetServersResult,
  McpSSEServerConfig,
  McpStdioServerConfig,
  MessageDisplayHookInput,
  MessageDisplayHookSpecificOutput,
  ModelInfo,
  ModelUsage,
  NonNullableUsage,
  NotificationHookInput,
  NotificationHookSpecificOutput,
  OnElicitation,
  OnUserDialog,
  Options,
  OutputFormat,
  OutputFormatType,
  PermissionBehavior,
  PermissionDecisionClassification,
  PermissionDeniedHookInput,
  PermissionDeniedHookSpecificOutput,
  PermissionMode,
  PermissionRequestHookInput,
  PermissionRequestHookSpecificOutput,
  PermissionResult,
  PermissionRuleValue,
  PermissionUpdate,
  PermissionUpdateDestination,
  PolicySettingsOrigin,
  PostCompactHookInput,
  PostModelSwitchHookInput,
  PostModelSwitchHookSpecificOutput,
  PostToolBatchHookInput,
  PostToolBatchHookSpecificOutput,
  PostToolBatchToolCall,
  PostToolUseFailureHookInput,
  PostToolUseFailureHookSpecificOutput,
  PostToolUseHookInput,
  PostToolUseHookSpecificOutput,
  PreCompactHookInput,
  PreModelSwitchHookInput,
  PreModelSwitchHookSpecificOutput,
  PreSkillShellCommandHookInput,
  PreSkillShellCommandHookSpecificOutput,
  PreToolUseHookInput,
  PreToolUseHookSpecificOutput,
  ProvenanceEntry,
  Query,
  ResolvedSettingSource,
  ResolvedSettings,
  ResolveSettingsOptions,
  RewindFilesResult,
  SandboxCredentialsConfig,
  SandboxFilesystemConfig,
  SandboxIgnoreViolations,
  SandboxNetworkConfig,
  SandboxSettings,
  SDKActiveGoalMessage,
  SDKAPIRetryMessage,
  SDKAssistantMessage,
  SDKAssistantMessageError,
  SDKAuthStatusMessage,
  SDKBackgroundTasksChangedMessage,
  SDKCommandsChangedMessage,
  SDKCompactBoundaryMessage,
  SDKContextUsage,
  SDKContextUsageCategory,
  SDKControlGetContextUsageResponse,
  SDKControlGetUsageResponse,
  SDKControlInitializeResponse,
  SDKControlInterruptResponse,
  SDKControlListPermissionRulesResponse,
  SDKControlMcpReadResourceResponse,
  SDKControlPermissionRulesState,
  SDKControlReadFileResponse,
  SDKControlReloadOutputStylesResponse,
  SDKControlReloadPluginsResponse,
  SDKControlReloadSkillsResponse,
  SDKControlRequest,
  SDKControlRequestProgressMessage,
  SDKControlResponse,
  SDKControlSetPermissionModeResponse,
  SDKConversationResetMessage,
  SDKDeferredToolUse,
  SDKElicitationCompleteMessage,
  SDKFilesPersistedEvent,
  SDKHookProgressMessage,
  SDKHookResponseMessage,
  SDKHookStartedMessage,
  SDKInformationalMessage,
  SDKLocalCommandOutputMessage,
  SDKMcpResourceLink,
  SDKMemoryRecallMessage,
  SDKMessage,
  SDKMessageOrigin,
  SDKMirrorErrorMessage,
  SDKModelRefusalFallbackMessage,
  SDKModelRefusalNoFallbackMessage,
  SDKNotificationMessage,
  SDKPartialAssistantMessage,
  SDKPermissionDenial,
  SDKPermissionDeniedMessage,
  SDKPermissionRuleDescription,
  SDKPermissionRuleEntry,
  SDKPermissionWorkspaceDirectory,
  SDKPluginInstallMessage,
  SDKPromptSuggestionMessage,
  SDKRateLimitEvent,
  SDKRateLimitInfo,
  SDKResultError,
  SDKResultMessage,
  SDKResultSuccess,
  SDKSessionInfo,
  SDKSessionStateChangedMessage,
  SDKSessionWritesLostMessage,
  SDKSettingsParseError,
  SDKStartupFailureReason,
  SDKStatus,
  SDKStatusMessage,
  SDKSystemMessage,
  SDKTaskNotificationMessage,
  SDKTaskProgressMessage,
  SDKTaskStartedMessage,
  SDKTaskUpdatedMessage,
  SDKThinkingTokensMessage,
  SDKToolProgressMessage,
  SDKToolUseSummaryMessage,
  SDKUsageReport,
  SDKUserMessage,
  SDKUserMessageReplay,
  SDKWorkerShuttingDownMessage,
  SdkBeta,
  SdkMcpToolDefinition,
  SdkPluginConfig,
  SessionCronSummary,
  SessionEndHookInput,
  SessionKey,
  SessionMessage,
  SessionMutationOptions,
  SessionStartHookInput,
  SessionStartHookSpecificOutput,
  SessionStore,
  SessionStoreEntry,
  SessionStoreFlush,
  SessionSummaryEntry,
  SettingSource,
  Settings,
  SetupHookInput,
  SetupHookSpecificOutput,
  SlashCommand,
  SpareProcess,
  SpawnedProcess,
  SpawnOptions,
  StopFailureHookInput,
  StopHookInput,
  StopHookSpecificOutput,
  SubagentStartHookInput,
  SubagentStartHookSpecificOutput,
  SubagentStopHookInput,
  SubagentStopHookSpecificOutput,
  SyncHookJSONOutput,
  TaskCompletedHookInput,
  TaskCreatedHookInput,
  TeammateIdleHookInput,
  TerminalReason,
  ThinkingAdaptive,
  ThinkingConfig,
  ThinkingDisabled,
  ThinkingEnabled,
  ToolConfig,
  Transport,
  UserDialogRequest,
  UserDialogResult,
  UserPromptExpansionHookInput,
  UserPromptExpansionHookSpecificOutput,
  UserPromptSubmitHookInput,
  UserPromptSubmitHookSpecificOutput,
  WarmQuery,
  WorktreeCreateHookInput,
  WorktreeCreateHookSpecificOutput,
  WorktreeRemoveHookInput,
} from "@anthropic-ai/claude-agent-sdk";

import type { SDKMessage } from "@anthropic-ai/claude-agent-sdk";

type SystemMessage = Extract<SDKMessage, { type: "system" }>;

/** One line per message kind; a UI picks its view by it. */
export function kindOf(message: SDKMessage): string {
  switch (message.type) {
    case "assistant":
    case "user":
    case "result":
    case "stream_event":
    case "tool_progress":
    case "auth_status":
    case "tool_use_summary":
    case "rate_limit_event":
    case "prompt_suggestion":
    case "conversation_reset":
      return message.type;
    case "system":
      return `system/${systemKindOf(message)}`;
    default: {
      const unknown: never = message;
      return `unknown ${JSON.stringify(unknown)}`;
    }
  }
}

function systemKindOf(message: SystemMessage): string {
  switch (message.subtype) {
    case "init":
    case "compact_boundary":
    case "status":
    case "api_retry":
    case "control_request_progress":
    case "model_refusal_fallback":
    case "model_refusal_no_fallback":
    case "local_command_output":
    case "hook_started":
    case "hook_progress":
    case "hook_response":
    case "plugin_install":
    case "task_notification":
    case "task_started":
    case "task_updated":
    case "task_progress":
    case "background_tasks_changed":
    case "thinking_tokens":
    case "session_state_changed":
    case "worker_shutting_down":
    case "commands_changed":
    case "notification":
    case "files_persisted":
    case "memory_recall":
    case "elicitation_complete":
    case "permission_denied":
    case "mirror_error":
    case "informational":
    case "session_writes_lost":
      return message.subtype;
    default: {
      const unknown: never = message;
      return `unknown ${JSON.stringify(unknown)}`;
    }
  }
}

console.log(
  kindOf({ type: "prompt_suggestion", suggestion: "Run the tests", uuid: "1-2-3-4-5", session_id: "s" }),
);
