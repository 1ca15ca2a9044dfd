import Anthropic from "@anthropic-ai/sdk";
import { type BuildRequestInput, buildRequest, type MessageCreateParams } from "./build-request.js";
import {
  CONTEXT_MANAGEMENT_BETA,
  type ContextEditingConfig,
  contextManagementParam,
} from "./context-editing.js";
import { createApiErrorMessage, createAssistantMessage } from "./create-message.js";
import { FallbackTriggeredError } from "./errors.js";
import { MessageAccumulator } from "./message-accumulator.js";
import type { AssistantMessage, ContentBlock, RawMessageStreamEvent } from "./messages.js";

type BetaStreamingParams = Anthropic.Beta.Messages.MessageCreateParamsStreaming;

/** Header that lets the simulator (and logs) tell request kinds apart. */
export const QUERY_SOURCE_HEADER = "x-forkloop-query-source";

export interface RetryOptions {
  /** Attempts after the first (default 10, like Claude Code's own retry loop). */
  readonly maxRetries?: number;
  /** First backoff step; doubles per attempt (default 500 ms). */
  readonly baseDelayMs?: number;
  /** Cap of any single wait, retry-after included (default 32 s). */
  readonly maxDelayMs?: number;
  /** Consecutive 529s before `FallbackTriggeredError` when a fallback exists (default 3). */
  readonly maxOverloadedRetries?: number;
}

export interface ModelCallRequest extends BuildRequestInput {
  /** Default: `new Anthropic()` from the environment, created on first use. */
  readonly client?: Anthropic | undefined;
  readonly querySource: string;
  readonly signal: AbortSignal;
  /** R-L3: API-level task budget for the whole agent turn. */
  readonly taskBudget?: { readonly total: number; readonly remaining: number } | undefined;
  /** Whether the caller has another model to fall back to (R-L8). */
  readonly fallbackAvailable: boolean;
  readonly retry?: RetryOptions | undefined;
  readonly parentUuid: string | null;
  /** uuid for the assistant message this call yields (known early so tool results can point at it). */
  readonly assistantUuid?: string | undefined;
  readonly uuid: () => string;
  /** R-C2 cached variant: send `context_management` edits through the beta endpoint. */
  readonly contextEditing?: ContextEditingConfig | undefined;
}

/** One retry of the model request, reported before the wait (Claude Code prints these too). */
export interface ApiRetryEvent {
  readonly type: "api_retry";
  readonly attempt: number;
  readonly maxRetries: number;
  readonly delayMs: number;
  readonly error: string;
}

export type ModelEvent =
  | { readonly type: "stream_event"; readonly event: RawMessageStreamEvent }
  | ApiRetryEvent
  /** A content block finished streaming (before message_stop): feeds the streaming executor. */
  | { readonly type: "content_block_complete"; readonly block: ContentBlock }
  | AssistantMessage;

interface FailedAttempt {
  readonly status: number | null;
  readonly type: string;
  readonly message: string;
  readonly retryable: boolean;
  readonly overloaded: boolean;
  readonly retryAfterMs: number | undefined;
}

/**
 * The production model call: one streaming request through the official SDK, with our own retry
 * loop on top (the SDK's is off, `maxRetries: 0`) because the SDK never retries a stream that
 * fails after it started (api doc §4) and because each retry is reported as an `api_retry`
 * event. Yields raw stream events as they arrive, then one assistant message; an API error that
 * survives the retries becomes an assistant message with `apiError` (expected failures are
 * data). Throws `FallbackTriggeredError` when the model stays overloaded and a fallback exists.
 */
export async function* callModel(request: ModelCallRequest): AsyncGenerator<ModelEvent, void> {
  const client = request.client ?? new Anthropic();
  const body = buildModelRequestBody(request);
  const maxRetries = request.retry?.maxRetries ?? 10;
  const maxOverloaded = request.retry?.maxOverloadedRetries ?? 3;
  let overloadedInARow = 0;
  for (let attempt = 0; ; attempt++) {
    const failure = yield* attemptStream(client, body, request);
    if (failure === undefined) return;
    if (failure === "aborted") return;
    overloadedInARow = failure.overloaded ? overloadedInARow + 1 : 0;
    if (failure.overloaded && request.fallbackAvailable && overloadedInARow >= maxOverloaded) {
      throw new FallbackTriggeredError(request.model, overloadedInARow);
    }
    if (!failure.retryable || attempt >= maxRetries) {
      yield createApiErrorMessage(
        { status: failure.status, type: failure.type, message: failure.message },
        request.model,
        { uuid: request.assistantUuid ?? request.uuid(), parentUuid: request.parentUuid },
      );
      return;
    }
    const delayMs = retryDelayMs(attempt, failure.retryAfterMs, request.retry);
    yield { type: "api_retry", attempt: attempt + 1, maxRetries, delayMs, error: failure.message };
    if (!(await sleep(delayMs, request.signal))) return;
  }
}

/** The body `callModel` sends, task budget included. */
export function buildModelRequestBody(request: ModelCallRequest): MessageCreateParams {
  const body = buildRequest(request);
  if (request.taskBudget) {
    // R-L3: the API-level task budget (`remaining` recomputed by the loop every iteration).
    (body as unknown as Record<string, unknown>).output_config = {
      task_budget: {
        type: "tokens",
        total: request.taskBudget.total,
        remaining: request.taskBudget.remaining,
      },
    };
  }
  if (request.contextEditing) {
    // R-C2 (cached variant): the API applies these edits before counting and caching.
    (body as unknown as Record<string, unknown>).context_management = contextManagementParam(
      request.contextEditing,
    );
  }
  return body;
}

async function* attemptStream(
  client: Anthropic,
  body: MessageCreateParams,
  request: ModelCallRequest,
): AsyncGenerator<ModelEvent, FailedAttempt | "aborted" | undefined> {
  const accumulator = new MessageAccumulator();
  try {
    const options = {
      signal: request.signal,
      maxRetries: 0,
      headers: { [QUERY_SOURCE_HEADER]: request.querySource },
    };
    // Context editing is a beta: its body field needs the beta endpoint and header (api doc §9).
    const stream = request.contextEditing
      ? ((await client.beta.messages.create(
          { ...(body as BetaStreamingParams), betas: [CONTEXT_MANAGEMENT_BETA] },
          options,
        )) as unknown as AsyncIterable<RawMessageStreamEvent>)
      : await client.messages.create(body, options);
    for await (const event of stream) {
      yield { type: "stream_event", event };
      const completed = accumulator.push(event);
      if (completed) yield { type: "content_block_complete", block: completed };
    }
  } catch (error) {
    if (request.signal.aborted) return "aborted";
    return classifyError(error);
  }
  // The SDK ends the iteration quietly when our signal aborts it.
  if (request.signal.aborted) return "aborted";
  const message = accumulator.finish();
  if (!message) {
    return {
      status: null,
      type: "incomplete_stream",
      message: "stream ended without message_stop",
      retryable: true,
      overloaded: false,
      retryAfterMs: undefined,
    };
  }
  yield createAssistantMessage(message, {
    uuid: request.assistantUuid ?? request.uuid(),
    parentUuid: request.parentUuid,
  });
  return undefined;
}

function classifyError(error: unknown): FailedAttempt {
  if (error instanceof Anthropic.APIConnectionError) {
    return {
      status: null,
      type: "connection_error",
      message: error.message,
      retryable: true,
      overloaded: false,
      retryAfterMs: undefined,
    };
  }
  if (error instanceof Anthropic.APIError) {
    const status = error.status ?? null;
    const type = error.type ?? (status === null ? "api_error" : `http_${status}`);
    // A mid-stream `event: error` has no status (api doc §3); it is retried like its type.
    const overloaded = status === 529 || type === "overloaded_error";
    const shouldRetry = error.headers?.get("x-should-retry");
    const retryable =
      shouldRetry === "true"
        ? true
        : shouldRetry === "false"
          ? false
          : status === null || status === 408 || status === 409 || status === 429 || status >= 500;
    return {
      status,
      type,
      message: error.apiMessage ?? error.message,
      retryable,
      overloaded,
      retryAfterMs: retryAfterMs(error.headers),
    };
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

export function retryDelayMs(
  attempt: number,
  retryAfter: number | undefined,
  options?: RetryOptions,
): number {
  const base = options?.baseDelayMs ?? 500;
  const max = options?.maxDelayMs ?? 32_000;
  if (retryAfter !== undefined && retryAfter > 0) return Math.min(retryAfter, max);
  return Math.min(base * 2 ** attempt, max);
}

/** Resolves true after `ms`, false as soon as the signal aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
