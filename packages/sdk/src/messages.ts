import type { ApiMessage, MessageParam, RawMessageStreamEvent } from "@forkloop/loop-core";
import type { z } from "zod";
import type { SDKContextUsage } from "./agent-sdk-types/control-types.js";
import type {
  SDKActiveGoalMessage,
  SDKAssistantMessageError,
  SDKAuthStatusMessage,
  SDKBackgroundTasksChangedMessage,
  SDKCommandsChangedMessage,
  SDKControlRequestProgressMessage,
  SDKConversationResetMessage,
  SDKDeferredToolUse,
  SDKElicitationCompleteMessage,
  SDKFilesPersistedEvent,
  SDKHookProgressMessage,
  SDKHookResponseMessage,
  SDKHookStartedMessage,
  SDKInformationalMessage,
  SDKLocalCommandOutputMessage,
  SDKMemoryRecallMessage,
  SDKMessageOrigin,
  SDKMirrorErrorMessage,
  SDKModelRefusalFallbackMessage,
  SDKModelRefusalNoFallbackMessage,
  SDKNotificationMessage,
  SDKPermissionDeniedMessage,
  SDKPluginInstallMessage,
  SDKPromptSuggestionMessage,
  SDKRateLimitEvent,
  SDKSessionStateChangedMessage,
  SDKSessionWritesLostMessage,
  SDKStartupFailureReason,
  SDKStatusMessage,
  SDKTaskUpdatedMessage,
  SDKThinkingTokensMessage,
  SDKToolProgressMessage,
  SDKToolUseSummaryMessage,
  SDKUsageReport,
  SDKUserMessageReplay,
  SDKWorkerShuttingDownMessage,
} from "./agent-sdk-types/other-messages.js";
import type {
  apiRetryLineSchema,
  assistantLineSchema,
  compactBoundaryLineSchema,
  modelFallbackLineSchema,
  resultLineSchema,
  streamEventLineSchema,
  systemInitLineSchema,
  taskNotificationLineSchema,
  taskProgressLineSchema,
  taskStartedLineSchema,
  tombstoneLineSchema,
  userLineSchema,
} from "./stream-json.js";

/**
 * The messages `query()` yields, named as the Claude Agent SDK names them. Each is its zod
 * schema's type (stream-json.ts, which validates every line the CLI prints), except that the API
 * payloads are typed as the Anthropic SDK types them: the schemas pin only what forkloop writes
 * (`message`, `event` stay loose there because the API adds kinds).
 */
export type SDKSystemMessage = z.infer<typeof systemInitLineSchema> & {
  betas?: string[];
  terminal_slash_commands?: string[];
  effort?: "low" | "medium" | "high" | "xhigh" | "max" | null;
  capabilities?: string[];
};
/**
 * An assistant message. Beside forkloop's fields, the Agent SDK's optional ones are typed (a
 * program may read them): `error` names why an API error message stands in for a reply.
 */
export type SDKAssistantMessage = Omit<z.infer<typeof assistantLineSchema>, "message" | "error"> & {
  readonly message: ApiMessage;
  error?: SDKAssistantMessageError;
  user_message_uuid?: string;
  user_message_uuids?: string[];
  resume_reason?: string;
  resumed_from_incomplete_thinking?: true;
  supersedes?: string[];
  aborted?: true;
  context_usage?: SDKContextUsage;
  usage_report?: SDKUsageReport;
};
/**
 * A user message, as `query()` yields it and as streaming input gives it. `uuid` and
 * `session_id` are optional as in the Agent SDK (input may leave them out); every message
 * forkloop yields has both.
 */
export type SDKUserMessage = Omit<z.infer<typeof userLineSchema>, "message" | "uuid" | "session_id"> & {
  readonly message: MessageParam;
  readonly uuid?: string;
  readonly session_id?: string;
  /** Streaming input's Agent SDK fields (forkloop queues every input message the same way). */
  priority?: "now" | "next" | "later";
  origin?: SDKMessageOrigin;
  shouldQuery?: boolean;
  client_composed?: true;
  pasted_content?: MessageParam["content"][];
  inline_pastes?: string[];
};
export type SDKPartialAssistantMessage = Omit<z.infer<typeof streamEventLineSchema>, "event"> & {
  readonly event: RawMessageStreamEvent;
};
export type SDKCompactBoundaryMessage = z.infer<typeof compactBoundaryLineSchema>;
export type SDKAPIRetryMessage = z.infer<typeof apiRetryLineSchema>;
export type SDKTaskStartedMessage = z.infer<typeof taskStartedLineSchema>;
export type SDKTaskProgressMessage = z.infer<typeof taskProgressLineSchema>;
export type SDKTaskNotificationMessage = z.infer<typeof taskNotificationLineSchema>;
/** forkloop: the primary model stayed overloaded and the loop switched to a fallback (R-L8). */
export type SDKModelFallbackMessage = z.infer<typeof modelFallbackLineSchema>;
/** forkloop: drop the message with `removed_uuid`; its attempt was abandoned (R-L8). */
export type SDKTombstoneMessage = z.infer<typeof tombstoneLineSchema>;
type ResultLine = z.infer<typeof resultLineSchema>;
/** The Agent SDK's optional result fields forkloop does not set (typed so programs may read them). */
type ResultExtras = {
  ttft_stream_ms?: number;
  time_to_request_ms?: number;
  user_message_uuid?: string;
  user_message_uuids?: string[];
  resume_reason?: string;
  queued_turn_count?: number;
  deferred_tool_use?: SDKDeferredToolUse;
  credential_expires_at?: string;
  fast_mode_state?: "off" | "cooldown" | "on";
  origin?: SDKMessageOrigin;
  startup_failure_reason?: SDKStartupFailureReason;
};
/** The result variants, named as the Agent SDK names them; `subtype` tells them apart. */
export type SDKResultSuccess = Omit<ResultLine, "subtype" | "errors" | "result" | "api_error_status"> &
  ResultExtras & {
    subtype: "success";
    result: string;
    /** Absent on a local command's result (`/compact`), as in the Agent SDK. */
    api_error_status?: number | null;
  };
/** An error result: as the Agent SDK's, no `result`, `api_error_status` or `ttft_ms` — `errors` says what went wrong. */
export type SDKResultError = Omit<
  ResultLine,
  "subtype" | "errors" | "result" | "api_error_status" | "ttft_ms"
> &
  ResultExtras & {
    subtype: Exclude<ResultLine["subtype"], "success">;
    /** What went wrong (only error results carry it, as in the Agent SDK). */
    errors: string[];
  };
export type SDKResultMessage = SDKResultSuccess | SDKResultError;
export type SDKPermissionDenial = SDKResultMessage["permission_denials"][number];
/** A result's `usage` (the main loop's tokens) and one `modelUsage` entry. */
export type NonNullableUsage = SDKResultMessage["usage"];
export type ModelUsage = SDKResultMessage["modelUsage"][string];

/** The messages a forkloop query yields (SDKMessage without the kinds it never sends). */
export type ForkloopMessage =
  | SDKSystemMessage
  | SDKAssistantMessage
  | SDKUserMessage
  | SDKPartialAssistantMessage
  | SDKCompactBoundaryMessage
  | SDKAPIRetryMessage
  | SDKTaskStartedMessage
  | SDKTaskProgressMessage
  | SDKTaskNotificationMessage
  | SDKModelFallbackMessage
  | SDKTombstoneMessage
  | SDKResultMessage;

/** The Agent SDK's message union: forkloop's, and the kinds only Claude Code sends (agent-sdk-types/other-messages.ts). */
export type SDKMessage =
  | ForkloopMessage
  | SDKUserMessageReplay
  | SDKStatusMessage
  | SDKControlRequestProgressMessage
  | SDKModelRefusalFallbackMessage
  | SDKModelRefusalNoFallbackMessage
  | SDKLocalCommandOutputMessage
  | SDKHookStartedMessage
  | SDKHookProgressMessage
  | SDKHookResponseMessage
  | SDKPluginInstallMessage
  | SDKToolProgressMessage
  | SDKAuthStatusMessage
  | SDKTaskUpdatedMessage
  | SDKBackgroundTasksChangedMessage
  | SDKThinkingTokensMessage
  | SDKSessionStateChangedMessage
  | SDKWorkerShuttingDownMessage
  | SDKCommandsChangedMessage
  | SDKNotificationMessage
  | SDKFilesPersistedEvent
  | SDKToolUseSummaryMessage
  | SDKMemoryRecallMessage
  | SDKRateLimitEvent
  | SDKElicitationCompleteMessage
  | SDKPermissionDeniedMessage
  | SDKPromptSuggestionMessage
  | SDKMirrorErrorMessage
  | SDKInformationalMessage
  | SDKConversationResetMessage
  | SDKSessionWritesLostMessage;

export type { SDKActiveGoalMessage };

/** A user message of streaming input: what a `prompt` AsyncIterable yields. */
export type SDKUserMessageInput = SDKUserMessage;
