import type Anthropic from "@anthropic-ai/sdk";
import { MalformedStreamError } from "./errors.js";

/** Why one attempt of a model request failed, and whether another attempt may succeed. */
export interface FailedAttempt {
  readonly status: number | null;
  readonly type: string;
  readonly message: string;
  readonly retryable: boolean;
  readonly overloaded: boolean;
  readonly retryAfterMs: number | undefined;
  /**
   * R-R11: when the rate limit resets (epoch ms), from the `anthropic-ratelimit-*-reset` headers
   * of a 429/529 without `retry-after`; the latest of them.
   */
  readonly resetAtMs?: number;
  /** The failed response's `request-id` header (an API error's message carries it, as Claude Code's). */
  readonly requestId?: string;
}

/** Which deadline of an attempt ran out (each aborts the attempt and retries it, R-R1, R-R2, R-R11). */
export type AttemptTimeout = "headers_timeout" | "stream_idle_timeout" | "attempt_timeout";

/**
 * Error codes of a connection that broke (Node's net errors, undici's socket errors). An SSE
 * stream cut mid-way surfaces as undici's `TypeError: terminated` whose `cause` carries one of
 * these; the SDK does not wrap errors raised while iterating a stream (api doc §4).
 */
const CONNECTION_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_ABORTED",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_RESPONSE_STATUS_CODE",
]);

const CONNECTION_MESSAGES = /^terminated$|socket hang up|other side closed|ECONNRESET|premature close/i;

/**
 * R-R1: the connection broke after the request was sent (`terminated`, `ECONNRESET`, socket
 * hang-up). The API lets a client retry these like a 529: nothing of the reply was kept.
 */
export function isInterruptedConnection(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && CONNECTION_CODES.has(code)) return true;
    if (CONNECTION_MESSAGES.test(current.message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The stream ended (or broke) before `message_stop`: the partial reply is discarded, retried. */
export function incompleteStream(message: string): FailedAttempt {
  return {
    status: null,
    type: "incomplete_stream",
    message,
    retryable: true,
    overloaded: false,
    retryAfterMs: undefined,
  };
}

/** How much of a response that is not an event stream is read to say what it is. */
const EXCERPT_BYTES = 4096;

/**
 * R-R9: a successful response that is not an event stream (`text/event-stream`, api doc §3) comes
 * from something that is not the Messages API — a proxy's HTML login page, another API's JSON.
 * Not retried: every request would get the same. The message names the content type and what
 * the body shows (an HTML page's title, else its first words).
 */
export async function notAnEventStream(response: Response): Promise<FailedAttempt | undefined> {
  const contentType = response.headers.get("content-type") ?? "";
  if (/^text\/event-stream\b/i.test(contentType)) return undefined;
  const excerpt = describeBody(await readStart(response));
  return wrongEndpoint(
    response.status,
    `with ${contentType === "" ? "no content type" : contentType}${excerpt === "" ? "" : ` (${excerpt})`} instead of an event stream`,
  );
}

const WRONG_ENDPOINT_MESSAGE = "the endpoint answered ";

/** R-R9: an answer that is not the Messages API's, never retried (every request would get it). */
function wrongEndpoint(status: number, what: string): FailedAttempt {
  return {
    status,
    type: "wrong_endpoint",
    message: `${WRONG_ENDPOINT_MESSAGE}${status} ${what}`,
    retryable: false,
    overloaded: false,
    retryAfterMs: undefined,
  };
}

/** True for a `wrong_endpoint` failure's message (what a result's text keeps of it). */
export function isWrongEndpointMessage(message: string): boolean {
  return message.startsWith(WRONG_ENDPOINT_MESSAGE);
}

/**
 * What an error body that is not the API's own (a typed JSON error) shows: a proxy's or a web
 * server's page by its title, not its markup.
 */
function untypedBody(error: SdkApiError): string {
  const text = error.message.replace(/^\d+ /, "");
  return text === "status code (no body)" ? "no body" : describeBody(text);
}

/** The first bytes of a body (the rest is cancelled: it may be large, or never end). */
async function readStart(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // What arrived is enough to name it.
  } finally {
    void reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, EXCERPT_BYTES));
}

/** An HTML page by its title (else its text), anything else by its first words; at most 100 characters. */
export function describeBody(text: string): string {
  const title = /<title[^>]*>([^<]*)</i.exec(text)?.[1]?.trim();
  if (title) return `an HTML page titled "${clip(title)}"`;
  const html = /<(!doctype|html|body)\b/i.test(text);
  const words = (html ? text.replace(/<[^>]*>/g, " ") : text).replace(/\s+/g, " ").trim();
  return html ? `an HTML page: "${clip(words)}"` : clip(words);
}

function clip(text: string): string {
  return text.length > 100 ? `${text.slice(0, 99)}…` : text;
}

/** R-B1: the pre-send gate (a request limiter) failed; nothing was sent, retried. */
export function requestGateFailed(error: unknown): FailedAttempt {
  return {
    status: null,
    type: "request_gate_failed",
    message: `the request gate failed: ${error instanceof Error ? error.message : String(error)}`,
    retryable: true,
    overloaded: false,
    retryAfterMs: undefined,
  };
}

export function attemptTimedOut(timeout: AttemptTimeout, ms: number): FailedAttempt {
  return {
    status: null,
    type: timeout,
    message:
      timeout === "headers_timeout"
        ? `no response headers within ${ms} ms`
        : timeout === "stream_idle_timeout"
          ? `the stream sent no event (pings aside) for ${ms} ms`
          : `the attempt did not finish within its overall deadline of ${ms} ms`,
    retryable: true,
    overloaded: false,
    retryAfterMs: undefined,
  };
}

/** An error of the official SDK's `APIError` family, as classifyError reads it. */
type SdkApiError = Pick<
  InstanceType<typeof Anthropic.APIError>,
  "status" | "headers" | "message" | "name" | "requestID"
> & { readonly type?: string | null; readonly apiMessage?: string | null };

/**
 * The SDK's API errors by their shape, not their classes: the client may come from another copy
 * of the SDK than forkloop's (a caller's own `client`, a worker's), whose classes differ. Every
 * `APIError` the SDK makes has these own fields, its connection errors with `status` undefined.
 */
function sdkApiError(error: unknown): SdkApiError | undefined {
  if (!(error instanceof Error)) return undefined;
  for (const field of ["status", "headers", "error", "requestID"])
    if (!Object.hasOwn(error, field)) return undefined;
  const { status, headers } = error as { status?: unknown; headers?: unknown };
  if (status !== undefined && typeof status !== "number") return undefined;
  if (headers !== undefined && typeof (headers as { get?: unknown }).get !== "function") return undefined;
  return error as unknown as SdkApiError;
}

/** The SDK's connection failures (and their timeouts): named so by the SDK, their class too. */
const CONNECTION_ERRORS = new Set(["APIConnectionError", "APIConnectionTimeoutError"]);
function isConnectionError(error: SdkApiError): boolean {
  return (
    error.status === undefined &&
    (CONNECTION_ERRORS.has(error.name) || CONNECTION_ERRORS.has((error as object).constructor.name))
  );
}

/**
 * An error thrown by the SDK or the stream, classified the way the API documents retries (api
 * doc §4): connection failures, 408/409/429/5xx and mid-stream errors are retryable, unless the
 * server says `x-should-retry`; a malformed stream (bad JSON in an event, events out of order) is
 * a broken transport and retried too. Anything else is a bug: not retried, surfaced with its
 * message. The SDK's errors are told by their shape (sdkApiError), whichever copy made them.
 */
export function classifyError(error: unknown): FailedAttempt {
  const apiError = sdkApiError(error);
  const connectionError = apiError !== undefined && isConnectionError(apiError);
  if (connectionError || isInterruptedConnection(error)) {
    const cause = (error as { cause?: unknown }).cause;
    const detail = cause instanceof Error && cause.message !== "" ? ` (${cause.message})` : "";
    return {
      status: null,
      type: connectionError ? "connection_error" : "stream_interrupted",
      message: `${(error as Error).message}${detail}`,
      retryable: true,
      overloaded: false,
      retryAfterMs: undefined,
    };
  }
  if (apiError !== undefined) {
    const status = apiError.status ?? null;
    const errorType = apiError.type ?? null;
    // The API's errors are typed; an untyped one came from something else at that URL.
    const untyped = errorType === null && status !== null;
    // R-R9: a 404 to the messages path from something else: the URL is not the Messages API.
    if (untyped && status === 404)
      return wrongEndpoint(404, `to POST /v1/messages (${untypedBody(apiError)})`);
    const type = errorType ?? (status === null ? "api_error" : `http_${status}`);
    // A mid-stream `event: error` has no status (api doc §3); it is retried like its type.
    const overloaded = status === 529 || type === "overloaded_error";
    const shouldRetry = apiError.headers?.get("x-should-retry");
    const retryable =
      shouldRetry === "true"
        ? true
        : shouldRetry === "false"
          ? false
          : status === null || status === 408 || status === 409 || status === 429 || status >= 500;
    return {
      status,
      type,
      message: apiError.apiMessage ?? (untyped ? `${status} ${untypedBody(apiError)}` : apiError.message),
      retryable,
      overloaded,
      retryAfterMs: retryAfterMs(apiError.headers),
      ...resetAt(apiError.headers, status),
      ...(apiError.requestID ? { requestId: apiError.requestID } : {}),
    };
  }
  if (error instanceof SyntaxError || error instanceof MalformedStreamError) {
    return { ...incompleteStream(`malformed stream: ${error.message}`), type: "malformed_stream" };
  }
  const message = error instanceof Error ? error.message : String(error);
  // Bugs are not retried: they surface as a model_error with their message.
  return {
    status: null,
    type: "client_error",
    message,
    retryable: false,
    overloaded: false,
    retryAfterMs: undefined,
  };
}

function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = headers?.get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const seconds = headers?.get("retry-after");
  if (seconds && Number.isFinite(Number(seconds))) return Number(seconds) * 1000;
  return undefined;
}

/**
 * R-R11: the anthropic-ratelimit reset headers (RFC 3339 times; `-unified-reset` in epoch
 * seconds) of a 429 or 529: the latest reset of the limits without room left, so a wait ends
 * when every exhausted limit is back.
 */
const RESET_HEADERS = [
  "anthropic-ratelimit-unified-reset",
  "anthropic-ratelimit-requests-reset",
  "anthropic-ratelimit-tokens-reset",
  "anthropic-ratelimit-input-tokens-reset",
  "anthropic-ratelimit-output-tokens-reset",
];

function resetAt(headers: Headers | undefined, status: number | null): { resetAtMs?: number } {
  if (headers === undefined || (status !== 429 && status !== 529)) return {};
  let latest: number | undefined;
  for (const name of RESET_HEADERS) {
    // Every response carries these headers: a limit with room left is not why the request failed
    // (an overloaded API's 529 says nothing about them), so only an exhausted or unstated one counts.
    const remaining = headers.get(name.replace(/-reset$/, "-remaining"))?.trim();
    if (remaining !== undefined && remaining !== "" && Number(remaining) > 0) continue;
    const value = headers.get(name)?.trim();
    if (!value) continue;
    const at = /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : Date.parse(value);
    if (Number.isFinite(at)) latest = Math.max(latest ?? at, at);
  }
  return latest === undefined ? {} : { resetAtMs: latest };
}
