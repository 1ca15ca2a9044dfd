import type { ApiMessage, MessageParam, RawMessageStreamEvent } from "@forkloop/loop-core";
import type { z } from "zod";
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
export type SDKSystemMessage = z.infer<typeof systemInitLineSchema>;
export type SDKAssistantMessage = Omit<z.infer<typeof assistantLineSchema>, "message"> & {
  readonly message: ApiMessage;
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
/** The result variants, named as the Agent SDK names them; `subtype` tells them apart. */
export type SDKResultSuccess = Omit<ResultLine, "subtype"> & { subtype: "success" };
export type SDKResultError = Omit<ResultLine, "subtype"> & {
  subtype: Exclude<ResultLine["subtype"], "success">;
};
export type SDKResultMessage = SDKResultSuccess | SDKResultError;
export type SDKPermissionDenial = SDKResultMessage["permission_denials"][number];
/** A result's `usage` (the main loop's tokens) and one `modelUsage` entry. */
export type NonNullableUsage = SDKResultMessage["usage"];
export type ModelUsage = SDKResultMessage["modelUsage"][string];

export type SDKMessage =
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

/** A user message of streaming input: what a `prompt` AsyncIterable yields. */
export type SDKUserMessageInput = SDKUserMessage;
