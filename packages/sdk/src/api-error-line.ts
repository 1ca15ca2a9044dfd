import { randomUUID } from "node:crypto";
import type { AssistantMessage } from "@forkloop/loop-core";
import type { SDKAssistantMessageError } from "./agent-sdk-types/other-messages.js";

/** The error a turn ended on, as the loop's API-error message carries it. */
export type EndingApiError = NonNullable<AssistantMessage["apiError"]>;

/** The error types the Messages API itself sends (the body's `error.type`). */
const API_ERROR_TYPES = new Set([
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "not_found_error",
  "request_too_large",
  "rate_limit_error",
  "api_error",
  "overloaded_error",
  "billing_error",
]);

/** The cut-reply error the loop ends on after its last max_tokens recovery (R-L10). */
const MAX_OUTPUT_TOKENS = "max_output_tokens";

/**
 * R-K2: the assistant message's `error` for an API error, as Claude Code names it: a reply that
 * stayed over the output cap, a refused or forbidden key, a low credit balance (402, agent-sdk
 * program api-error-kinds), a model the API does not serve, a rate limit; any other API error is
 * `unknown` (a 400's too: Claude Code keeps `invalid_request` for requests it judged itself).
 */
export function assistantErrorKind(error: EndingApiError): SDKAssistantMessageError {
  if (error.type === MAX_OUTPUT_TOKENS) return "max_output_tokens";
  if (error.status === 401 || error.status === 403) return "authentication_failed";
  if (error.status === 402) return "billing_error";
  if (error.status === 404) return "model_not_found";
  // A request too large and a server error, as Claude Code 2.1.332 names them (api-error-too-large,
  // api-error-server).
  if (error.status === 413) return "invalid_request";
  if (error.status !== null && error.status >= 500) return "server_error";
  if (error.status === 429) return "rate_limit";
  return "unknown";
}

/**
 * The fields an API-error assistant message carries beside its message, as Claude Code's: the
 * kind, that it is one, the status and the API's error type when a response came, and for a
 * reply over the output cap Claude Code's own error name and what cut it.
 */
export function apiErrorLineFields(error: EndingApiError): Record<string, unknown> {
  return {
    error: assistantErrorKind(error),
    is_api_error_message: true,
    ...(error.status === null ? {} : { api_error_status: error.status }),
    ...(API_ERROR_TYPES.has(error.type) ? { api_error_type: error.type } : {}),
    ...(error.type === MAX_OUTPUT_TOKENS
      ? { api_error: MAX_OUTPUT_TOKENS, api_error_params: { cut: "output_limit" } }
      : {}),
  };
}

/**
 * The fields a result that ended on an API error carries, as Claude Code's success with
 * `is_error`: the status (null without a response), and the API's error type or Claude Code's
 * name for a reply over the output cap.
 */
export function apiErrorResultFields(error: EndingApiError): Record<string, unknown> {
  return {
    api_error_status: error.status,
    ...(API_ERROR_TYPES.has(error.type) ? { api_error_type: error.type } : {}),
    ...(error.type === MAX_OUTPUT_TOKENS ? { api_error: MAX_OUTPUT_TOKENS } : {}),
  };
}

/**
 * An API-error message's `message` as Claude Code writes it: no API call produced it, so its id
 * is a uuid, its model `<synthetic>`, it stops on an empty stop sequence and its usage is zero.
 */
export function syntheticErrorMessage(text: string): never {
  return {
    id: randomUUID(),
    type: "message",
    role: "assistant",
    model: "<synthetic>",
    content: [{ type: "text", text }],
    stop_reason: "stop_sequence",
    stop_sequence: "",
    diagnostics: null,
    container: null,
    stop_details: null,
    usage: {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens_details: null,
      server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
      service_tier: null,
      cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
      inference_geo: null,
      iterations: null,
      speed: null,
      fallback_credit: null,
    },
    context_management: null,
  } as never;
}
