import type { MessageParam, PermissionMode } from "@forkloop/loop-core";
import type { AgentInfo, ModelUsage, SlashCommand } from "./control-types.js";

/**
 * The Agent SDK's `SDKMessage` members that a forkloop query does not yield: Claude Code's
 * process, account, plugin, terminal and cloud events. They are typed so that a program's
 * `switch` over every kind compiles unchanged; forkloop's own messages are in ../messages.ts.
 */
type Envelope = { uuid: string; session_id: string };

/** Why an assistant message (or a retry) failed, in Claude Code's categories. */
export type SDKAssistantMessageError =
  | "authentication_failed"
  | "oauth_org_not_allowed"
  | "account_on_hold"
  | "verification_required"
  | "billing_error"
  | "rate_limit"
  | "overloaded"
  | "invalid_request"
  | "model_not_found"
  | "server_error"
  | "unknown"
  | "max_output_tokens"
  | "cloud_credential_error";

/** Who a user message came from. */
export type SDKMessageOrigin =
  | { kind: "human" }
  | { kind: "channel"; server: string }
  | {
      kind: "peer";
      from: string;
      fromMode?: "bypass" | "prompting";
      name?: string;
      fromSession?: string;
      senderTaskId?: string;
      body?: string;
      verifiedPeerPid?: number;
    }
  | {
      kind: "task-notification";
      subkind?:
        | "scheduled-trigger"
        | "peer-send-message"
        | "projects-relay"
        | "session-inbox"
        | "external-event";
      fireReason?: string;
      runId?: string;
    }
  | { kind: "coordinator" }
  | { kind: "unclassified" }
  | { kind: "observer"; from: string; senderTaskId: string }
  | { kind: "auto-continuation" }
  | { kind: "observer-activity" };

export type SDKStatus = "compacting" | "requesting" | null;
export type ApiKeySource =
  | "ANTHROPIC_API_KEY"
  | "apiKeyHelper"
  | "/login managed key"
  | "none"
  | "user"
  | "project"
  | "org"
  | "temporary"
  | "oauth";
export type FastModeState = "off" | "cooldown" | "on";
export type FastModeDisabledReason =
  | "free"
  | "preference"
  | "extra_usage_disabled"
  | "network_error"
  | "unknown"
  | "not_first_party"
  | "disabled_by_env"
  | "model_not_allowed"
  | "sdk_opt_in_required"
  | "pending";

/** A tool call a hook deferred (`permissionDecision: "defer"`), for the host to run. */
export interface SDKDeferredToolUse {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface SDKMcpResourceLink {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: Record<string, unknown>;
}

/** A settings file that did not parse (`permissionRules` responses). */
export interface SDKSettingsParseError {
  file?: string;
  path: string;
  message: string;
}

export type SDKStartupFailureReason =
  | "org_pin_api_key_conflict"
  | "provider_not_allowed"
  | "org_verify_failed"
  | "org_pin_mismatch"
  | "managed_settings_invalid"
  | "remote_settings_required_unavailable"
  | "gateway_signin_required"
  | "gateway_access_denied"
  | "proxy_invalid"
  | "temp_dir_unusable"
  | "cwd_unavailable"
  | "shell_tool_missing"
  | "session_held_by_background"
  | "worktree_resume_refused"
  | "worktree_unverified"
  | "cli_version_too_old"
  | "bypass_root"
  | "org_config_required_unavailable"
  | "org_config_refused"
  | "sandbox_required_unavailable"
  | "initialize_not_first"
  | "config_file_invalid"
  | "managed_settings_not_delivered"
  | "initialize_fields_not_delivered"
  | "sideload_flags_disabled";

export interface SDKRateLimitInfo {
  status: "allowed" | "allowed_warning" | "rejected";
  resetsAt?: number;
  rateLimitType?:
    | "five_hour"
    | "seven_day"
    | "seven_day_opus"
    | "seven_day_sonnet"
    | "seven_day_overage_included"
    | "overage";
  utilization?: number;
  overageStatus?: "allowed" | "allowed_warning" | "rejected";
  overageResetsAt?: number;
  overageDisabledReason?: string;
  isUsingOverage?: boolean;
  overageInUse?: boolean;
  overageEnabled?: boolean;
  surpassedThreshold?: number;
  limitScope?: "service" | "channel" | "group_pool";
  errorCode?: "credits_required";
  canUserPurchaseCredits?: boolean;
  hasChargeableSavedPaymentMethod?: boolean;
}

/** The session's spend and the account's limits (Claude Code's `/usage`). */
export interface SDKUsageReport {
  session: {
    total_cost_usd: number;
    total_api_duration_ms: number;
    total_duration_ms: number;
    total_lines_added: number;
    total_lines_removed: number;
    model_usage: Record<string, ModelUsage>;
  };
  rate_limits: {
    limits:
      | {
          kind: string;
          group: string;
          percent: number;
          resets_at: string | null;
          scope?: {
            model?: { display_name: string } | null;
            surface?: { display_name: string } | null;
          } | null;
          severity: string;
          is_active: boolean;
        }[]
      | null;
    extra_usage?: ExtraUsage | null;
  } | null;
}

/** Paid usage beyond a plan's limits (subscriptions only). */
export interface ExtraUsage {
  is_enabled: boolean;
  monthly_limit: number | null;
  used_credits: number | null;
  utilization: number | null;
  currency?: string | null;
}

/** A user message replayed to the host (a resumed session's history, a local command's echo). */
export type SDKUserMessageReplay = Envelope & {
  type: "user";
  message: MessageParam;
  parent_tool_use_id: string | null;
  isSynthetic?: boolean;
  tool_use_result?: unknown;
  priority?: "now" | "next" | "later";
  origin?: SDKMessageOrigin;
  shouldQuery?: boolean;
  timestamp?: string;
  client_composed?: true;
  isReplay: true;
  /** The local command whose output this echoes (e.g. `setModel()` as `/model`). */
  local_command_run?: { command: string; args: string };
  file_attachments?: unknown[];
};

export type SDKStatusMessage = Envelope & {
  type: "system";
  subtype: "status";
  status: SDKStatus;
  permissionMode?: PermissionMode;
  compact_result?: "success" | "failed";
  compact_error?: string;
};

export type SDKControlRequestProgressMessage = Envelope & {
  type: "system";
  subtype: "control_request_progress";
  request_id: string;
  status: "started" | "api_retry";
  attempt?: number;
  max_retries?: number;
  retry_delay_ms?: number;
  error_status?: number | null;
};

type Refusal = {
  original_model: string;
  request_id: string | null;
  api_refusal_category?: string | null;
  api_refusal_explanation?: string | null;
  refused_user_message_uuid?: string | null;
  content: string;
};
export type SDKModelRefusalFallbackMessage = Envelope &
  Refusal & {
    type: "system";
    subtype: "model_refusal_fallback";
    trigger: "refusal";
    direction: "retry" | "revert" | "sticky";
    scope?: "session" | "local";
    fallback_model: string;
    retracted_message_uuids?: string[];
  };
export type SDKModelRefusalNoFallbackMessage = Envelope &
  Refusal & { type: "system"; subtype: "model_refusal_no_fallback" };

export type SDKLocalCommandOutputMessage = Envelope & {
  type: "system";
  subtype: "local_command_output";
  content: string;
};

type HookRun = { hook_id: string; hook_name: string; hook_event: string };
export type SDKHookStartedMessage = Envelope & HookRun & { type: "system"; subtype: "hook_started" };
export type SDKHookProgressMessage = Envelope &
  HookRun & { type: "system"; subtype: "hook_progress"; stdout: string; stderr: string; output: string };
export type SDKHookResponseMessage = Envelope &
  HookRun & {
    type: "system";
    subtype: "hook_response";
    output: string;
    stdout: string;
    stderr: string;
    exit_code?: number;
    outcome: "success" | "error" | "cancelled";
  };

export type SDKPluginInstallMessage = Envelope & {
  type: "system";
  subtype: "plugin_install";
  status: "started" | "installed" | "failed" | "completed";
  name?: string;
  error?: string;
};

export type SDKToolProgressMessage = Envelope & {
  type: "tool_progress";
  tool_use_id: string;
  tool_name: string;
  parent_tool_use_id: string | null;
  elapsed_time_seconds: number;
  task_id?: string;
  heartbeat?: boolean;
  subagent_type?: string;
  subagent_retry?: {
    agent_id: string;
    attempt: number;
    max_retries: number;
    retry_delay_ms: number;
    error_status: number | null;
    error_category: string;
  };
  description?: string;
};

export type SDKAuthStatusMessage = Envelope & {
  type: "auth_status";
  isAuthenticating: boolean;
  output: string[];
  error?: string;
};

export type SDKTaskUpdatedMessage = Envelope & {
  type: "system";
  subtype: "task_updated";
  task_id: string;
  run_id?: string;
  patch: {
    status?: "pending" | "running" | "completed" | "failed" | "killed" | "paused";
    description?: string;
    end_time?: number;
    total_paused_ms?: number;
    error?: string;
    is_backgrounded?: boolean;
  };
};

export type SDKBackgroundTasksChangedMessage = Envelope & {
  type: "system";
  subtype: "background_tasks_changed";
  tasks: {
    task_id: string;
    run_id?: string;
    task_type: string;
    subagent_type?: string;
    description: string;
    parent_task_id?: string;
    ambient?: boolean;
  }[];
};

export type SDKThinkingTokensMessage = Envelope & {
  type: "system";
  subtype: "thinking_tokens";
  estimated_tokens: number;
  estimated_tokens_delta: number;
  user_message_uuid?: string;
};

export type SDKSessionStateChangedMessage = Envelope & {
  type: "system";
  subtype: "session_state_changed";
  state: "idle" | "running" | "requires_action";
};

export type SDKWorkerShuttingDownMessage = Envelope & {
  type: "system";
  subtype: "worker_shutting_down";
  reason: string;
};

export type SDKCommandsChangedMessage = Envelope & {
  type: "system";
  subtype: "commands_changed";
  commands: SlashCommand[];
};

export type SDKNotificationMessage = Envelope & {
  type: "system";
  subtype: "notification";
  key: string;
  text: string;
  priority: "low" | "medium" | "high" | "immediate";
  color?: string;
  timeout_ms?: number;
};

export type SDKFilesPersistedEvent = Envelope & {
  type: "system";
  subtype: "files_persisted";
  files: { filename: string; file_id: string }[];
  failed: { filename: string; error: string }[];
  processed_at: string;
};

export type SDKToolUseSummaryMessage = Envelope & {
  type: "tool_use_summary";
  summary: string;
  preceding_tool_use_ids: string[];
};

export type SDKMemoryRecallMessage = Envelope & {
  type: "system";
  subtype: "memory_recall";
  mode: "select" | "synthesize";
  memories: { path: string; scope: "personal" | "team" | "organization"; content?: string }[];
};

export type SDKRateLimitEvent = Envelope & { type: "rate_limit_event"; rate_limit_info: SDKRateLimitInfo };

export type SDKElicitationCompleteMessage = Envelope & {
  type: "system";
  subtype: "elicitation_complete";
  mcp_server_name: string;
  elicitation_id: string;
};

export type SDKPermissionDeniedMessage = Envelope & {
  type: "system";
  subtype: "permission_denied";
  tool_name: string;
  tool_use_id: string;
  agent_id?: string;
  decision_reason_type?: string;
  decision_reason?: string;
  message: string;
};

export type SDKPromptSuggestionMessage = Envelope & { type: "prompt_suggestion"; suggestion: string };

export type SDKMirrorErrorMessage = Envelope & {
  type: "system";
  subtype: "mirror_error";
  error: string;
  key: { projectKey: string; sessionId: string; subpath?: string };
};

export type SDKInformationalMessage = Envelope & {
  type: "system";
  subtype: "informational";
  content: string;
  level: "info" | "notice" | "suggestion" | "warning";
  tool_use_id?: string;
  prevent_continuation?: boolean;
  tag?: string;
};

export type SDKConversationResetMessage = Envelope & {
  type: "conversation_reset";
  new_conversation_id: string;
  trigger?: "clear" | "plan_mode_exit" | "fresh_session" | "onboarding";
  user_message_uuid?: string;
  timestamp?: string;
};

export type SDKSessionWritesLostMessage = Envelope & {
  type: "system";
  subtype: "session_writes_lost";
  error_code: "ENOSPC" | "EDQUOT";
  lost: ("transcript" | "global_config")[];
  transcript_session_ids?: string[];
};

/** Not in the SDKMessage union: the goal Claude Code's `/goal` sets, sent on its own. */
export type SDKActiveGoalMessage = Envelope & {
  type: "active_goal";
  value: {
    condition: string;
    iterations: number;
    set_at: number;
    tokens_at_start: number;
    last_reason?: string;
  } | null;
};

export type { AgentInfo };
