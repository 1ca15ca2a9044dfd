import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type ApiError, apiError, invalidRequest } from "./api-error.js";
import { brainTurn } from "./brain-turn.js";
import { type BuiltReply, buildReply } from "./build-reply.js";
import { type FaultDecision, faultOfKind, faultRecordName, pickFault } from "./faults.js";
import { isGarbledFault, sendGarbled } from "./garbled-reply.js";
import { expandDeepInputs, hostileReply, isHostileReplyFault } from "./hostile-reply.js";
import { sendError, sendJson } from "./http-io.js";
import { firstTokenDelayMs, type ModelTiming, outputDelayMs, timingFor } from "./latency.js";
import { effectiveContextWindow, type ModelSpec } from "./model-registry.js";
import { CACHE_READ_MULTIPLIER, pricesForPrompt } from "./model-table.js";
import type { CacheUsage } from "./prompt-cache.js";
import { constrainReply } from "./reply-constraints.js";
import type { MessagesRequest } from "./request-schema.js";
import { type ServerToolCounts, WEB_SEARCH_PRICE_USD } from "./server-tools.js";
import type { SimState } from "./sim-state.js";
import { formatEvent, type MessageHeader, replyEvents } from "./sse-events.js";
import { isStallFault, sendStall } from "./stalled-reply.js";
import type { ThreadState } from "./threads.js";
import type { BrainReply, RequestRecord, SimUsage } from "./types.js";
import type { ValidRequest } from "./validate-request.js";

export interface MessagesCall {
  state: SimState;
  req: IncomingMessage;
  res: ServerResponse;
  record: RequestRecord;
  apiKey: string;
  /** The `anthropic-beta` header, split (the 1M-context beta widens the window). */
  betas: readonly string[];
  valid: ValidRequest<MessagesRequest>;
  /** `PromptCache.arrive()` when the request came in (before its body was read). */
  arrival: number;
  /** The message thread this request creates or continues (threads.ts). */
  thread?: ThreadState;
}

/**
 * With latency off, the earliest a response that writes the cache cold starts: requests sent in
 * parallel arrive within it and miss, as on the API. The simulator's choice, not a measurement.
 */
export const MIN_WRITE_FIRST_BYTE_MS = 50;
/** …and after that many event-loop turns: a client in the same process gets to send meanwhile. */
const WRITE_HOLD_LOOP_TURNS = 10;

/** Answers a validated `POST /v1/messages`: rate limits, faults, brain, cache, latency, reply. */
export async function handleMessages(call: MessagesCall): Promise<void> {
  const { state, res, record, valid } = call;
  const { body, model } = valid;
  state.messagesCount++;
  let fault = pickFault(state.faults, state.messagesCount);

  const account = state.cache.account({
    scope: call.apiKey,
    arrival: call.arrival,
    modelId: model.id,
    layout: valid.layout,
    breakpoints: valid.breakpoints,
    minCacheableTokens: model.minCacheableTokens,
  });
  // ITPM counts input tokens and cache writes, not cache reads (api doc §4). Every response
  // carries the rate-limit headers, as the API's do.
  const counted = account.usage.input_tokens + account.usage.cache_creation_input_tokens;
  const decision = state.limiter.admit(call.apiKey, counted);
  if (!decision.ok) {
    sendError(res, record, state.clock(), record.id, apiError(429, decision.message), decision.headers);
    return;
  }
  const rateHeaders = decision.headers;
  if (fault && sentWithoutReply(call, fault, rateHeaders)) return;

  let reply: BrainReply;
  let serverToolUse: ServerToolCounts | null = null;
  let forcedToolUse = false;
  const requestDigest = createHash("sha256").update(record.rawBody).digest("hex");
  try {
    // max_tokens 0 is a cache pre-warm: no content, stop_reason max_tokens (api doc §1).
    if (body.max_tokens === 0) {
      reply = { content: [], stop_reason: "max_tokens" };
    } else {
      const turn = await brainTurn({
        brain: state.brain,
        body,
        querySource: record.querySource,
        seed: state.seed,
        apiKey: call.apiKey,
        web: state.web,
        requestDigest,
        now: state.clock(),
      });
      reply = turn.reply;
      serverToolUse = turn.serverToolUse;
    }
  } catch (error) {
    sendError(
      res,
      record,
      state.clock(),
      record.id,
      apiError(500, `simulator brain failed: ${(error as Error).message}`),
    );
    return;
  }
  // A scheduled or random fault wins over one the brain asks for.
  if (!fault && reply.fault) fault = faultOfKind(reply.fault);
  if (fault && sentWithoutReply(call, fault, rateHeaders)) return;
  if (fault) record.fault = faultRecordName(fault.kind);
  // off_schema: the brain's reply as it is, what an endpoint that ignores the request's
  // constraints sends.
  if (body.max_tokens > 0 && fault?.kind !== "off_schema") {
    // Whatever the brain said, the reply keeps the API's guarantees (tool_choice, strict tools,
    // structured outputs).
    const constrained = constrainReply(reply, body, state.schemaChecker);
    reply = constrained.reply;
    forcedToolUse = constrained.forcedToolUse;
  }

  const asBuilt =
    body.max_tokens === 0
      ? { content: [], stopReason: "max_tokens" as const, stopSequence: null, outputTokens: 0 }
      : buildReply(reply, {
          body,
          seed: state.seed,
          requestDigest,
          cut: fault?.kind === "max_tokens",
          contextRoom: effectiveContextWindow(model, call.betas) - valid.layout.totalTokens,
          tokenFactor: model.tokenFactor ?? 1,
          forcedToolUse,
          displayDefault: model.displayDefault ?? "summarized",
        });
  const built = isHostileReplyFault(fault) ? hostileReply(asBuilt, fault, body, requestDigest) : asBuilt;
  state.issuedThinking.remember(
    built.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])),
    built.content.flatMap((b) => (b.type === "thinking" ? [b.signature] : [])),
  );
  state.limiter.recordOutput(call.apiKey, decision.use, built.outputTokens);
  const usage: SimUsage = {
    ...account.usage,
    output_tokens: built.outputTokens,
    ...(serverToolUse ? { server_tool_use: serverToolUse } : {}),
  };
  record.usage = usage;
  record.costUsd = costUsd(model, usage);

  const timing = state.latency ? timingFor(state.latency, model) : null;
  if (timing) {
    await state.sleeper.sleep(
      firstTokenDelayMs(timing, usage.input_tokens + usage.cache_creation_input_tokens),
    );
  } else if (coldWrite(usage)) {
    // With no latency model a response would start within a millisecond, before a client that
    // sends requests in parallel has even sent the next one (an HTTP client prepares them one
    // after another), so they would read this one's writes. On the API they all miss: its first
    // byte comes hundreds of ms later (api doc §5, R-D3). So a response that writes
    // a prefix it read nothing of (a cold start: the first of a burst of identical requests)
    // starts no sooner than this. Others are not held: one that writes nothing cannot be read
    // early, and one that extends a prefix it read (a next turn, a fork) writes a tail its
    // siblings do not share. That keeps the small-request rate and the turn latency.
    await state.sleeper.sleep(MIN_WRITE_FIRST_BYTE_MS);
  }
  // Then some turns of the event loop: requests whose bytes are waiting, or that a client in
  // this process is still sending (a busy loop runs both late), are numbered as arrived before
  // this response starts. One turn for a reply that writes nothing.
  if (!timing) {
    const turns = coldWrite(usage) ? WRITE_HOLD_LOOP_TURNS : 1;
    for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  if (res.destroyed) return;
  // The response starts now: only from here on may others read what this request wrote (api doc §5).
  account.commit();

  state.messageCounter++;
  const id = `msg_sim_${state.messageCounter.toString(36)}${randomBytes(8).toString("hex")}`;
  // `diagnostics.previous_message_id` asks why the previous request's prefix was not reused.
  const diagnostics =
    body.diagnostics === undefined
      ? null
      : state.diagnostics.diagnose(
          body.diagnostics?.previous_message_id ?? null,
          call.apiKey,
          model.id,
          valid.layout,
          account.keys,
        );
  state.diagnostics.remember(id, call.apiKey, model.id, valid.layout, account.keys);
  if (call.thread) state.threads.remember(id, call.apiKey, call.thread, built.content, state.clock());
  const contextManagement = valid.contextManagement
    ? { applied_edits: valid.contextManagement.appliedEdits }
    : null;
  if (contextManagement) record.contextManagement = contextManagement;
  // The API answers with the resolved model id, not the alias that was asked for.
  const header: MessageHeader = { id, model: model.id, diagnostics, contextManagement };
  if (body.stream === true) {
    await streamReply(call, { header, built, usage, fault, timing, headers: rateHeaders });
    return;
  }
  if (fault?.kind === "drop") {
    res.destroy();
    return;
  }
  if (fault?.kind === "mid_stream_error") {
    // A non-streaming call has no stream to break: it sees the overloaded error instead.
    sendError(res, record, state.clock(), record.id, apiError(529), rateHeaders);
    return;
  }
  if (timing) await state.sleeper.sleep(outputDelayMs(timing, built.outputTokens));
  if (fault?.kind === "slow") await state.sleeper.sleep(fault.slowMs * built.content.length * 4);
  const text = JSON.stringify(messageBody(header, built, usage));
  sendJson(
    res,
    record,
    state.clock(),
    200,
    isHostileReplyFault(fault) ? expandDeepInputs(text) : text,
    rateHeaders,
  );
}

/** A request that writes the cache and read nothing of it: what a parallel twin would read. */
function coldWrite(usage: CacheUsage): boolean {
  return usage.cache_creation_input_tokens > 0 && usage.cache_read_input_tokens === 0;
}

function isStatusFault(fault: FaultDecision): boolean {
  return /^\d{3}$/.test(fault.kind) || fault.kind === "prompt_too_long";
}

/** Answers with the fault alone when it needs no reply (a status, a stall, a garbled body). */
function sentWithoutReply(
  call: MessagesCall,
  fault: FaultDecision,
  headers: Record<string, string>,
): boolean {
  const { state, res, record } = call;
  if (isStatusFault(fault)) {
    sendStatusFault(call, fault, headers);
    return true;
  }
  if (!isStallFault(fault) && !isGarbledFault(fault)) return false;
  record.fault = faultRecordName(fault.kind);
  if (isStallFault(fault)) sendStall(res, record, fault, state.clock(), headers);
  else sendGarbled(res, record, fault, state.clock(), headers);
  return true;
}

function sendStatusFault(call: MessagesCall, fault: FaultDecision, headers: Record<string, string>): void {
  const { state, res, record } = call;
  record.fault = faultRecordName(fault.kind);
  const extra = { ...headers };
  if (fault.retryAfterSeconds !== null) extra["retry-after"] = String(fault.retryAfterSeconds);
  const error =
    fault.kind === "prompt_too_long"
      ? invalidRequest("prompt is too long: 200001 tokens > 200000 maximum")
      : apiError(Number(fault.kind));
  sendError(res, record, state.clock(), record.id, error, extra);
}

/** The non-streaming response body (also each succeeded result of a message batch). */
export function messageBody(header: MessageHeader, built: BuiltReply, usage: SimUsage): object {
  return {
    id: header.id,
    type: "message",
    role: "assistant",
    content: built.content,
    model: header.model,
    stop_reason: built.stopReason,
    stop_sequence: built.stopSequence,
    stop_details: built.stopDetails ?? null,
    container: null,
    diagnostics: header.diagnostics,
    ...(header.contextManagement ? { context_management: header.contextManagement } : {}),
    usage: { ...usage, service_tier: "standard" },
  };
}

/** How long a dropped stream's last events have to reach the client before the cut. */
const DROP_GRACE_MS = 30;

interface StreamedReply {
  header: MessageHeader;
  built: BuiltReply;
  usage: SimUsage;
  fault: FaultDecision | null;
  /** Null = no latency model: events are written without delays. */
  timing: ModelTiming | null;
  headers: Record<string, string>;
}

async function streamReply(call: MessagesCall, reply: StreamedReply): Promise<void> {
  const { state, res, record } = call;
  const { header, built, usage, fault, timing, headers } = reply;
  const events = replyEvents(header, built, usage);
  res.writeHead(200, {
    ...headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  record.status = 200;
  record.firstByteAt = state.clock();
  // Mid-stream faults fire after message_start and the first content event, before the end; a
  // drop may say after how many events (never after message_stop: the stream must break).
  const midway = Math.max(2, Math.min(events.length - 2, Math.floor(events.length / 2)));
  const breakAt =
    fault?.kind === "drop" && fault.afterEvents !== null
      ? Math.min(fault.afterEvents, events.length - 1)
      : midway;
  let pending = "";
  for (const [i, event] of events.entries()) {
    if (res.destroyed) {
      record.error = { type: "client_closed", message: "the client closed the connection mid-stream" };
      return;
    }
    if (fault && i === breakAt) {
      if (fault.kind === "drop") {
        // Wait until the events are handed to the socket, then a moment more: destroying at once
        // would discard them, or the client would drop what it had not read yet (a stream that
        // errors loses its queued chunks) — then the cut would never be mid-stream.
        await flushed(res, pending);
        await state.sleeper.sleep(DROP_GRACE_MS);
        res.destroy();
        return;
      }
      if (fault.kind === "mid_stream_error") {
        const error: ApiError = apiError(529);
        record.error = { type: error.type, message: error.message };
        // The API's mid-stream error event (api doc §3); the SDK throws on it and does not retry.
        pending += formatEvent({
          event: "error",
          data: { type: "error", error: { type: error.type, message: error.message } },
        });
        await flush(res, pending);
        res.end();
        return;
      }
    }
    pending += formatEvent(event);
    const delay =
      (timing ? outputDelayMs(timing, event.tokens) : 0) + (fault?.kind === "slow" ? fault.slowMs : 0);
    if (delay > 0) {
      await flush(res, pending);
      pending = "";
      await state.sleeper.sleep(delay);
    }
  }
  await flush(res, pending);
  res.end();
}

/** Writes, waiting for the socket to drain when its buffer is full. */
async function flush(res: ServerResponse, text: string): Promise<void> {
  if (text === "" || res.destroyed) return;
  if (!res.write(text)) {
    await new Promise<void>((resolve) => {
      res.once("drain", resolve);
      res.once("close", resolve);
    });
  }
}

/** Writes and resolves once the data has left for the socket (or the socket is gone). */
function flushed(res: ServerResponse, text: string): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    res.once("close", resolve);
    res.write(text, () => resolve());
  });
}

/**
 * Cost by the model's prices: input ×1, 5m write ×1.25, 1h write ×2, read ×0.1 (or the row's), output
 * ×1), plus web searches at $10 per 1,000 (pricing page; fetches cost only their tokens). A model
 * priced by prompt length (Haiku 5.5) takes the band of this request's prompt — input, cache
 * writes and reads together (its overview page).
 */
export function costUsd(
  model: ModelSpec,
  usage: CacheUsage & { output_tokens: number; server_tool_use?: ServerToolCounts },
): number {
  const prompt = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
  const prices = pricesForPrompt(model, prompt);
  const input = prices.inputPricePerMTok / 1_000_000;
  return (
    (usage.server_tool_use?.web_search_requests ?? 0) * WEB_SEARCH_PRICE_USD +
    usage.input_tokens * input +
    usage.cache_creation.ephemeral_5m_input_tokens * input * 1.25 +
    usage.cache_creation.ephemeral_1h_input_tokens * input * 2 +
    usage.cache_read_input_tokens * input * (model.cacheReadMultiplier ?? CACHE_READ_MULTIPLIER) +
    usage.output_tokens * (prices.outputPricePerMTok / 1_000_000)
  );
}
