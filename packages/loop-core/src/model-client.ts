import type Anthropic from "@anthropic-ai/sdk";
import { loadAnthropicSdk } from "./anthropic-sdk.js";
import { AttemptDeadline } from "./attempt-deadline.js";
import {
  type BuildRequestInput,
  buildRequest,
  type MessageCreateParams,
  type ToolUnion,
} from "./build-request.js";
import { closedObjectSchema } from "./closed-object-schema.js";
import {
  CONTEXT_MANAGEMENT_BETA,
  type ContextEditingConfig,
  contextManagementParam,
} from "./context-editing.js";
import { createApiErrorMessage, createAssistantMessage } from "./create-message.js";
import { FallbackTriggeredError } from "./errors.js";
import { MessageAccumulator } from "./message-accumulator.js";
import type { AssistantMessage, ContentBlock, Message, RawMessageStreamEvent } from "./messages.js";
import { effortForModel } from "./model-catalog.js";
import {
  attemptTimedOut,
  classifyError,
  type FailedAttempt,
  incompleteStream,
  notAnEventStream,
  requestGateFailed,
} from "./model-failure.js";
import { fillSchemaDefaults } from "./schema-defaults.js";
import { screenToolUse, toolUseIdsOf, toolUseRejection } from "./untrusted-tool-uses.js";

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
  /** R-R2: an attempt with no response headers after this long is aborted and retried. */
  readonly headersTimeoutMs?: number;
  /**
   * R-R2: a stream that sends no event (pings do not count) for this long is aborted and
   * retried — a server that sent headers and then nothing must not hang a run forever.
   */
  readonly streamIdleTimeoutMs?: number;
  /**
   * R-R11: an attempt still streaming after this long is aborted and retried, however often its
   * events come (default 10 minutes, Claude Code's `API_TIMEOUT_MS` default).
   */
  readonly attemptTimeoutMs?: number;
  /**
   * R-R11: the longest a rate limit (429/529) whose reset is far away is waited out — the run or
   * the pool pauses until the reset instead of failing after its retries (default 6 hours). A
   * reset further away than this (all such waits of one request together) fails the request.
   */
  readonly maxRateLimitWaitMs?: number;
}

/** R-R11: the model client's clock (a seam: tests wait out an hour's rate limit at once). */
export interface RetryClock {
  now(): number;
  /** Resolves true after `ms`, false as soon as `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<boolean>;
}

export const SYSTEM_CLOCK: RetryClock = { now: () => Date.now(), sleep };

/** Headers of a streaming response come once the model starts (api doc §3); 2 minutes is ample. */
const DEFAULT_HEADERS_TIMEOUT_MS = 120_000;
/** Events (text, thinking, input deltas) arrive every few seconds even in long replies. */
const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 90_000;
/** R-R11: one attempt, however it streams, ends within this (Claude Code's request timeout). */
const DEFAULT_ATTEMPT_TIMEOUT_MS = 600_000;
/** R-R11: a usage limit that resets within 6 hours is waited out (a night's unattended batch). */
const DEFAULT_MAX_RATE_LIMIT_WAIT_MS = 6 * 60 * 60 * 1000;

/**
 * R-B1: awaited before each attempt's HTTP request is sent — a pool-wide 429 pause,
 * a `--rpm` request slot. It resolves when the request may go, or early once `signal` aborts
 * (the attempt is then not sent). A rejection fails the attempt (retried like a broken
 * connection). The headers deadline is armed only after it: a wait on a limit is not a server
 * that fails to answer.
 */
export type BeforeSend = (signal: AbortSignal) => Promise<void>;

export interface ModelCallRequest extends BuildRequestInput {
  /** Default: `new Anthropic()` from the environment, created on first use. */
  readonly client?: Anthropic | undefined;
  readonly querySource: string;
  readonly signal: AbortSignal;
  /** R-L3: API-level task budget for the whole agent turn. */
  readonly taskBudget?: { readonly total: number; readonly remaining: number } | undefined;
  readonly outputConfig?: OutputConfig | undefined;
  /** Whether the caller has another model to fall back to (R-L8). */
  readonly fallbackAvailable: boolean;
  readonly retry?: RetryOptions | undefined;
  readonly parentUuid: string | null;
  /** uuid for the assistant message this call yields (known early so tool results can point at it). */
  readonly assistantUuid?: string | undefined;
  readonly uuid: () => string;
  /** R-C2 cached variant: send `context_management` edits through the beta endpoint. */
  readonly contextEditing?: ContextEditingConfig | undefined;
  /** R-B1: the gate each attempt passes before it is sent (`BeforeSend`). */
  readonly beforeSend?: BeforeSend | undefined;
  /** R-R11: default the system clock. */
  readonly clock?: RetryClock | undefined;
}

/** One retry of the model request, reported before the wait (Claude Code prints these too). */
export interface ApiRetryEvent {
  readonly type: "api_retry";
  readonly attempt: number;
  readonly maxRetries: number;
  readonly delayMs: number;
  readonly error: string;
  /** The failed attempt's HTTP status; null for a connection error or a mid-stream error event. */
  readonly status: number | null;
  /**
   * R-R11: set when a rate limit's reset is far away: the request waits until then (epoch ms)
   * and this wait is not counted as an attempt.
   */
  readonly resumesAt?: number;
}

export type ModelEvent =
  | {
      readonly type: "stream_event";
      readonly event: RawMessageStreamEvent;
      /** The response's `request-id` (what the finished message carries as `requestId`). */
      readonly requestId?: string;
    }
  | ApiRetryEvent
  /** A content block finished streaming (before message_stop): feeds the streaming executor. */
  | { readonly type: "content_block_complete"; readonly block: ContentBlock }
  | AssistantMessage;

/**
 * The production model call: one streaming request through the official SDK, with our own retry
 * loop on top (the SDK's is off, `maxRetries: 0`) because the SDK never retries a stream that
 * fails after it started (api doc §4) and because each retry is reported as an `api_retry`
 * event. R-R1: a stream cut mid-way (`terminated`, ECONNRESET, no `message_stop`), malformed,
 * or silent past a deadline (`headersTimeoutMs`, `streamIdleTimeoutMs`) is retried like a 529.
 * Yields raw stream events as they arrive, then one assistant message; an API error that
 * survives the retries becomes an assistant message with `apiError` (expected failures are
 * data). Throws `FallbackTriggeredError` when the model stays overloaded and a fallback exists.
 */
export async function* callModel(request: ModelCallRequest): AsyncGenerator<ModelEvent, void> {
  const client = request.client ?? new (await loadAnthropicSdk())();
  const clock = request.clock ?? SYSTEM_CLOCK;
  const body = buildModelRequestBody(request);
  const maxRetries = request.retry?.maxRetries ?? 10;
  const maxOverloaded = request.retry?.maxOverloadedRetries ?? 3;
  const maxWaitMs = request.retry?.maxRateLimitWaitMs ?? DEFAULT_MAX_RATE_LIMIT_WAIT_MS;
  let overloadedInARow = 0;
  let waitedForResetMs = 0;
  for (let attempt = 0; ; attempt++) {
    const failure = yield* attemptStream(client, body, request);
    if (failure === undefined) return;
    if (failure === "aborted") return;
    // R-R11: a limit that resets far away is waited out in one pause, not burnt in retries.
    const resetWaitMs = farResetWaitMs(failure, request.retry, clock.now());
    if (resetWaitMs !== undefined) {
      if (waitedForResetMs + resetWaitMs > maxWaitMs) {
        yield createApiErrorMessage(
          {
            status: failure.status,
            type: failure.type,
            message: `${failure.message} — rate limited until ${new Date(clock.now() + resetWaitMs).toISOString()}, beyond the ${formatWait(maxWaitMs)} this run waits for a reset (--retry-max-wait, FORKLOOP_RETRY_MAX_WAIT_MS); raise it or resume after the reset`,
          },
          request.model,
          { uuid: request.assistantUuid ?? request.uuid(), parentUuid: request.parentUuid },
        );
        return;
      }
      waitedForResetMs += resetWaitMs;
      yield {
        type: "api_retry",
        attempt: attempt + 1,
        maxRetries,
        delayMs: resetWaitMs,
        error: failure.message,
        status: failure.status,
        resumesAt: clock.now() + resetWaitMs,
      };
      if (!(await clock.sleep(resetWaitMs, request.signal))) return;
      attempt--; // waiting for a reset is not a failed attempt
      continue;
    }
    overloadedInARow = failure.overloaded ? overloadedInARow + 1 : 0;
    if (failure.overloaded && request.fallbackAvailable && overloadedInARow >= maxOverloaded) {
      throw new FallbackTriggeredError(request.model, overloadedInARow);
    }
    if (!failure.retryable || attempt >= maxRetries) {
      yield createApiErrorMessage(
        { status: failure.status, type: failure.type, message: failure.message },
        request.model,
        {
          uuid: request.assistantUuid ?? request.uuid(),
          parentUuid: request.parentUuid,
          baseURL: client.baseURL,
          ...(failure.requestId === undefined ? {} : { requestId: failure.requestId }),
        },
      );
      return;
    }
    const delayMs = retryDelayMs(attempt, failure.retryAfterMs, request.retry);
    yield {
      type: "api_retry",
      attempt: attempt + 1,
      maxRetries,
      delayMs,
      error: failure.message,
      status: failure.status,
    };
    if (!(await clock.sleep(delayMs, request.signal))) return;
  }
}

/**
 * R-R11: how long to wait for a rate limit (429, 529) whose reset — `retry-after`, else the
 * anthropic-ratelimit reset headers — is beyond the longest backoff step (`maxDelayMs`, 32 s):
 * retrying sooner can only fail again. Undefined for anything else (the usual backoff).
 */
function farResetWaitMs(
  failure: FailedAttempt,
  options: RetryOptions | undefined,
  now: number,
): number | undefined {
  if (failure.status !== 429 && failure.status !== 529) return undefined;
  const waitMs =
    failure.retryAfterMs ?? (failure.resetAtMs === undefined ? undefined : failure.resetAtMs - now);
  const maxDelay = options?.maxDelayMs ?? 32_000;
  return waitMs !== undefined && waitMs > maxDelay ? Math.ceil(waitMs) : undefined;
}

/** `1h 0m`, `6h`, `45s`: a wait as the pause line says it. */
export function formatWait(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 === 0 ? `${hours}h` : `${hours}h ${minutes % 60}m`;
}

/** The body `callModel` sends, task budget included. */
export function buildModelRequestBody(request: ModelCallRequest): MessageCreateParams {
  const body = buildRequest(request);
  const outputConfig: Record<string, unknown> = { ...request.outputConfig };
  if (request.outputConfig?.format !== undefined) {
    // R-X3: structured outputs take only closed objects; the user's schema need not say so.
    const { format } = request.outputConfig;
    outputConfig.format = { ...format, schema: closedObjectSchema(format.schema) };
  }
  if (request.outputConfig?.effort !== undefined) {
    // R-D2: only a level the model takes (the model table); a fork or a fallback model may take
    // fewer levels than the session's model.
    const effort = effortForModel(
      request.model,
      request.outputConfig.effort,
      body.thinking?.type === "disabled",
    );
    if (effort === undefined) delete outputConfig.effort;
    else outputConfig.effort = effort;
  }
  if (request.taskBudget) {
    // R-L3: the API-level task budget (`remaining` recomputed by the loop every iteration).
    outputConfig.task_budget = {
      type: "tokens",
      total: request.taskBudget.total,
      remaining: request.taskBudget.remaining,
    };
  }
  if (Object.keys(outputConfig).length > 0) {
    (body as unknown as Record<string, unknown>).output_config = outputConfig;
  }
  // R-X2: with thinking on, Claude Code asks the API to keep every thinking block (clear_thinking,
  // keep "all"), so earlier turns' thinking is not cleared at the API's default of one turn;
  // R-C2 (cached variant): the contextEditing edits go beside it, clear_thinking first.
  const thinkingOn = body.thinking !== undefined && body.thinking.type !== "disabled";
  const editing: ContextEditingConfig | undefined =
    thinkingOn && request.contextEditing?.clearThinking === undefined
      ? { ...request.contextEditing, clearThinking: { keep: "all" } }
      : request.contextEditing;
  if (editing) {
    // The API applies these edits before counting and caching.
    (body as unknown as Record<string, unknown>).context_management = contextManagementParam(editing);
  }
  return body;
}

async function* attemptStream(
  client: Anthropic,
  body: MessageCreateParams,
  request: ModelCallRequest,
): AsyncGenerator<ModelEvent, FailedAttempt | "aborted" | undefined> {
  if (request.signal.aborted) return "aborted";
  // R-B1: the gate is passed once per attempt, before its deadline starts. The SDK's
  // own retries are off (`maxRetries: 0` below), so an attempt is exactly one HTTP request and
  // a retry (ours) passes the gate again; were the SDK to retry inside an attempt, those
  // re-sends would not be gated.
  if (request.beforeSend) {
    const gate = await passGate(request.beforeSend, request.signal);
    if (gate !== undefined) return gate;
  }
  const accumulator = new MessageAccumulator();
  // The attempt's own controller: the caller's signal aborts it, and so do the deadlines.
  const attempt = new AbortController();
  const onAbort = (): void => attempt.abort(request.signal.reason);
  request.signal.addEventListener("abort", onAbort, { once: true });
  const deadline = new AttemptDeadline(attempt);
  const headersMs = request.retry?.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const idleMs = request.retry?.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
  // R-R11: armed once, from the send on: events that each come in time cannot keep it alive.
  deadline.armOverall(request.retry?.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS);
  let iterator: AsyncIterator<RawMessageStreamEvent> | undefined;
  let ended = false;
  // R-R3: every tool_use is screened (duplicate ids, absurd nesting) before anyone sees it.
  const toolUses = new ToolUseScreen(request.messages, request.tools);
  let requestId: string | undefined;
  try {
    const options = {
      signal: attempt.signal,
      maxRetries: 0,
      headers: { [QUERY_SOURCE_HEADER]: request.querySource },
    };
    deadline.arm("headers_timeout", headersMs);
    // Context editing is a beta: its body field needs the beta endpoint and header (api doc §9).
    // withResponse: the response's `request-id` goes on the assistant message (stream-json prints it).
    const { data, request_id, response } = usesContextManagement(body)
      ? await client.beta.messages
          .create({ ...(body as BetaStreamingParams), betas: [CONTEXT_MANAGEMENT_BETA] }, options)
          .withResponse()
      : await client.messages.create(body, options).withResponse();
    requestId = request_id ?? undefined;
    // R-R9: a 200 that is no event stream (a proxy's HTML login page, a JSON reply from another
    // API) is a wrong endpoint, said at once; read as a stream it looked like a dropped one and
    // was retried for minutes, then failed every item of a batch alike.
    const wrong = await notAnEventStream(response);
    if (wrong !== undefined) return wrong;
    iterator = (data as unknown as AsyncIterable<RawMessageStreamEvent>)[Symbol.asyncIterator]();
    const abandoned = whenAborted(attempt.signal);
    for (;;) {
      // Only the wait for the next event counts as idle, not the time the caller spends on one.
      deadline.arm("stream_idle_timeout", idleMs);
      const pending = iterator.next();
      // An abort that lands while this generator is suspended at a yield (the caller reacting to
      // an event, e.g. a fork starting from a streamed tool_use) can leave the SDK's next read
      // waiting for ever; the attempt's own signal ends the wait instead (R-L16).
      pending.catch(() => {});
      const next = await Promise.race([pending, abandoned]);
      deadline.disarm();
      if (next.done) break;
      const event = next.value;
      yield { type: "stream_event", event, ...(requestId === undefined ? {} : { requestId }) };
      const completed = accumulator.push(event);
      if (completed) yield { type: "content_block_complete", block: toolUses.screen(completed) };
    }
    ended = true;
  } catch (error) {
    if (request.signal.aborted) return "aborted";
    if (deadline.fired) return attemptTimedOut(deadline.fired.timeout, deadline.fired.ms);
    // R-R1: a stream cut after it started (`terminated`, ECONNRESET) is retried like a 529;
    // what streamed so far is dropped (the loop discards tools started from it, R-L12).
    return classifyError(error);
  } finally {
    deadline.dispose();
    request.signal.removeEventListener("abort", onAbort);
    // A caller that stopped early, or an error, must not leave the HTTP request open.
    if (!ended) attempt.abort(new Error("attempt abandoned"));
  }
  // The SDK ends the iteration quietly when its signal aborts it.
  if (request.signal.aborted) return "aborted";
  if (deadline.fired) return attemptTimedOut(deadline.fired.timeout, deadline.fired.ms);
  const message = accumulator.finish();
  if (!message) return incompleteStream("stream ended without message_stop");
  for (const block of message.content) toolUses.screen(block);
  yield createAssistantMessage(message, {
    uuid: request.assistantUuid ?? request.uuid(),
    parentUuid: request.parentUuid,
    ...(requestId === undefined ? {} : { requestId }),
  });
  return undefined;
}

/** Context management is a beta: a body that asks for it goes through the beta endpoint. */
function usesContextManagement(body: MessageCreateParams): boolean {
  return (body as unknown as Record<string, unknown>).context_management !== undefined;
}

async function passGate(
  gate: BeforeSend,
  signal: AbortSignal,
): Promise<FailedAttempt | "aborted" | undefined> {
  try {
    await gate(signal);
  } catch (error) {
    if (signal.aborted) return "aborted";
    return requestGateFailed(error);
  }
  return signal.aborted ? "aborted" : undefined;
}

/**
 * Screens each tool_use block of one attempt once, against the conversation's ids so far, and
 * fills its schema's defaults (R-X1).
 */
class ToolUseScreen {
  readonly #seen: Set<string>;
  readonly #done = new Set<ContentBlock>();
  readonly #tools: readonly ToolUnion[];

  constructor(history: readonly Message[], tools: readonly ToolUnion[]) {
    this.#seen = toolUseIdsOf(history);
    this.#tools = tools;
  }

  screen(block: ContentBlock): ContentBlock {
    if (block.type === "tool_use" && !this.#done.has(block)) {
      this.#done.add(block);
      screenToolUse(block, this.#seen);
      if (toolUseRejection(block) === undefined) fillSchemaDefaults(block, this.#tools);
    }
    return block;
  }
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

/**
 * The request's `output_config` besides the task budget: `effort`, and `format` — structured
 * outputs, the reply's text constrained to a JSON schema (the Agent SDK's `outputFormat`).
 */
export interface OutputConfig {
  readonly effort?: "low" | "medium" | "high" | "xhigh" | "max";
  readonly format?: { readonly type: "json_schema"; readonly schema: Record<string, unknown> };
}

/** Resolves as an ended iteration once the signal aborts. */
function whenAborted(signal: AbortSignal): Promise<IteratorReturnResult<undefined>> {
  const ended = { done: true, value: undefined } as const;
  if (signal.aborted) return Promise.resolve(ended);
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(ended), { once: true }));
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
