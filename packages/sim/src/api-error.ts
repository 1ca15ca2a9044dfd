/** An error the simulator answers with, in the API's shape (api doc §4). */
export interface ApiError {
  status: number;
  type: ApiErrorType;
  message: string;
  /**
   * `error.details.error_code`: the machine-readable cause the API sets on some errors, which the
   * SDK maps to typed errors and clients act on (`thread_unsupported_request` → resend the
   * conversation whole). Errors page: https://platform.claude.com/docs/en/api/errors
   */
  errorCode?: string;
  /** Fields `error.details` carries beside `error_code` (`paths`, `max_side_length_pixels`, …). */
  details?: Readonly<Record<string, unknown>>;
}

export type ApiErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "billing_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "timeout_error"
  | "overloaded_error"
  | "conflict_error";

const TYPE_BY_STATUS: Readonly<Record<number, ApiErrorType>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  409: "conflict_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

const DEFAULT_MESSAGE: Readonly<Record<ApiErrorType, string>> = {
  invalid_request_error: "Invalid request",
  authentication_error: "invalid x-api-key",
  billing_error: "Your credit balance is too low to access the Anthropic API.",
  permission_error: "Your API key does not have permission to use the specified resource.",
  not_found_error: "Not found",
  request_too_large: "Request exceeds the maximum allowed number of bytes.",
  rate_limit_error: "Number of request tokens has exceeded your per-minute rate limit",
  api_error: "Internal server error",
  timeout_error: "Request timed out",
  overloaded_error: "Overloaded",
  conflict_error: "Conflict",
};

/** The API's error type for an HTTP status (unknown 5xx → api_error, unknown 4xx → invalid_request_error). */
function errorTypeForStatus(status: number): ApiErrorType {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

export function isApiError(value: unknown): value is ApiError {
  return (
    typeof value === "object" && value !== null && "status" in value && "type" in value && "message" in value
  );
}

export function apiError(status: number, message?: string): ApiError {
  const type = errorTypeForStatus(status);
  return { status, type, message: message ?? DEFAULT_MESSAGE[type] };
}

export function invalidRequest(
  message: string,
  errorCode?: string,
  details?: Readonly<Record<string, unknown>>,
): ApiError {
  return {
    status: 400,
    type: "invalid_request_error",
    message,
    ...(errorCode ? { errorCode } : {}),
    ...(details ? { details } : {}),
  };
}

/** The `error` object: `{type, message, details?: {error_code}}`. */
export function errorObject(error: ApiError): object {
  return {
    type: error.type,
    message: error.message,
    ...(error.errorCode ? { details: { error_code: error.errorCode, ...error.details } } : {}),
  };
}

/** The error body: `{"type":"error","error":{"type","message","details"?},"request_id"}`. */
export function errorBody(error: ApiError, requestId: string): string {
  return JSON.stringify({ type: "error", error: errorObject(error), request_id: requestId });
}
