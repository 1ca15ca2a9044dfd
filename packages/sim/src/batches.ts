import { createHash, randomBytes } from "node:crypto";
import { z } from "zod";
import { type ApiError, apiError, errorObject, invalidRequest } from "./api-error.js";
import { type BatchScript, parseBatchScript, scriptFor } from "./batch-script.js";
import { type BrainTurn, brainTurn } from "./brain-turn.js";
import { buildReply } from "./build-reply.js";
import { costUsd, messageBody } from "./handle-messages.js";
import { BATCH_DISCOUNT } from "./model-table.js";
import { constrainReply } from "./reply-constraints.js";
import { describeIssue } from "./schema-issues.js";
import { addRecord, type SimState } from "./sim-state.js";
import type { RequestRecord } from "./types.js";
import { validateMessagesRequest } from "./validate-request.js";

/**
 * The Message Batches API (R-D4), as the batch processing page and the Message Batches API
 * reference describe it (https://platform.claude.com/docs/en/build-with-claude/batch-processing,
 * https://platform.claude.com/docs/en/api/creating-message-batches): a batch is created
 * `in_progress`, its requests run after `processingMs` of the simulator's clock (the API takes up
 * to 24 hours; tests set it to 0), each request's result is `succeeded` / `errored` (its params are
 * validated only then, as the API validates them asynchronously) / `canceled` / `expired`, billed
 * at half the standard price with `usage.service_tier: "batch"` (pricing page). State advances
 * lazily, whenever the batch is read, so it never needs a timer.
 */
export interface BatchOptions {
  /** Clock time from creation until the requests have run (default 1000 ms). */
  processingMs?: number;
  /** Clock time after which unfinished requests expire (default 24 h, as the API). */
  expiresAfterMs?: number;
  /**
   * What happens to some batches (`batch-script.ts`): `"expire@2:after=1,cancel@3,529@1.2"` or
   * parsed items — expire or cancel batch N part way, fail entry E of batch N.
   */
  script?: BatchScript | string;
  /** Largest create request body in bytes (default the API's 256 MB; a 413 above it). */
  maxBytes?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

const createSchema = z.strictObject({
  requests: z
    .array(
      z.strictObject({
        // Length first: a 65-character id is `requests.0.custom_id: String should have at most 64
        // characters`, the API's 400 as quoted in anthropics/anthropic-sdk-python#1220.
        custom_id: z
          .string()
          .min(1)
          .max(64)
          .regex(/^[a-zA-Z0-9_-]+$/),
        params: z.record(z.string(), z.unknown()),
      }),
    )
    .min(1)
    .max(100_000),
});

type Result =
  | { type: "succeeded"; message: object }
  | { type: "errored"; error: object }
  | { type: "canceled" }
  | { type: "expired" };

interface Batch {
  id: string;
  /** 1 for the simulator's first batch (the script counts batches so). */
  ordinal: number;
  apiKey: string;
  version: string;
  betas: readonly string[];
  createdAt: number;
  cancelAt: number | null;
  endedAt: number | null;
  requests: { custom_id: string; params: Record<string, unknown> }[];
  results: { custom_id: string; result: Result }[] | null;
  /** The batch is being processed (requests run one after another on the brain). */
  running: Promise<void> | null;
}

export class BatchStore {
  readonly #batches = new Map<string, Batch>();
  readonly #processingMs: number;
  readonly #expiresAfterMs: number;
  readonly #script: BatchScript;
  readonly maxBytes: number;
  #counter = 0;

  constructor(options: BatchOptions = {}) {
    this.#processingMs = options.processingMs ?? 1000;
    this.#expiresAfterMs = options.expiresAfterMs ?? DAY_MS;
    this.#script =
      typeof options.script === "string" ? parseBatchScript(options.script) : (options.script ?? []);
    this.maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
  }

  /** `POST /v1/messages/batches`. */
  create(
    state: SimState,
    json: unknown,
    context: { apiKey: string; version: string; betas: readonly string[] },
  ): { ok: true; batch: object } | { ok: false; error: ApiError } {
    const parsed = createSchema.safeParse(json);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      return {
        ok: false,
        error: invalidRequest(first ? describeIssue(first, json) : "Invalid request body"),
      };
    }
    const ids = new Set<string>();
    for (const request of parsed.data.requests) {
      if (ids.has(request.custom_id)) {
        // Wording UNCONFIRMED: custom_ids must be unique within a batch (batch processing page).
        return { ok: false, error: invalidRequest(`requests: duplicate custom_id "${request.custom_id}"`) };
      }
      ids.add(request.custom_id);
    }
    this.#counter++;
    const batch: Batch = {
      id: `msgbatch_sim_${this.#counter.toString(36)}${randomBytes(8).toString("hex")}`,
      ordinal: this.#counter,
      ...context,
      createdAt: state.clock(),
      cancelAt: null,
      endedAt: null,
      requests: parsed.data.requests,
      results: null,
      running: null,
    };
    this.#batches.set(batch.id, batch);
    return { ok: true, batch: this.#view(batch, "") };
  }

  /** The batch (advanced to the clock), or a 404 for an id this key does not own. */
  async get(state: SimState, apiKey: string, id: string, baseUrl: string): Promise<object | ApiError> {
    const batch = this.#owned(apiKey, id);
    if (!batch) return notFound(id);
    await this.#advance(state, batch);
    return this.#view(batch, baseUrl);
  }

  /** `GET /v1/messages/batches`: newest first, paged like every list endpoint. */
  async list(state: SimState, apiKey: string, query: URLSearchParams, baseUrl: string): Promise<object> {
    const mine = [...this.#batches.values()].filter((b) => b.apiKey === apiKey).reverse();
    for (const batch of mine) await this.#advance(state, batch);
    return page(
      mine.map((b) => this.#view(b, baseUrl) as { id: string }),
      query,
    );
  }

  /** `POST /v1/messages/batches/{id}/cancel`: `canceling`, then ended with the rest canceled. */
  async cancel(state: SimState, apiKey: string, id: string, baseUrl: string): Promise<object | ApiError> {
    const batch = this.#owned(apiKey, id);
    if (!batch) return notFound(id);
    await this.#advance(state, batch);
    if (batch.endedAt === null && batch.cancelAt === null) batch.cancelAt = state.clock();
    return this.#view(batch, baseUrl);
  }

  /** `DELETE /v1/messages/batches/{id}`: only a batch that has ended. */
  async delete(state: SimState, apiKey: string, id: string): Promise<object | ApiError> {
    const batch = this.#owned(apiKey, id);
    if (!batch) return notFound(id);
    await this.#advance(state, batch);
    if (batch.endedAt === null) {
      // The API refuses to delete a batch still processing: cancel it first (batch processing
      // page); the wording is UNCONFIRMED.
      return invalidRequest(
        `Message batch ${id} is still processing and cannot be deleted. Cancel it first, then delete it once it has ended.`,
      );
    }
    this.#batches.delete(id);
    return { id, type: "message_batch_deleted" };
  }

  /** `GET /v1/messages/batches/{id}/results`: JSONL, one line per request. */
  async results(state: SimState, apiKey: string, id: string): Promise<string | ApiError> {
    const batch = this.#owned(apiKey, id);
    if (!batch) return notFound(id);
    await this.#advance(state, batch);
    if (batch.endedAt === null || !batch.results) {
      // Wording UNCONFIRMED: results exist once the batch has ended.
      return invalidRequest(
        `Message batch ${id} has not finished processing; its results are not available yet.`,
      );
    }
    return batch.results.map((line) => `${JSON.stringify(line)}\n`).join("");
  }

  #owned(apiKey: string, id: string): Batch | undefined {
    const batch = this.#batches.get(id);
    return batch?.apiKey === apiKey ? batch : undefined;
  }

  /** Moves the batch to where the clock says it is: canceled, expired or processed. */
  async #advance(state: SimState, batch: Batch): Promise<void> {
    if (batch.endedAt !== null) return;
    const now = state.clock();
    const readyAt = batch.createdAt + this.#processingMs;
    const expiresAt = batch.createdAt + this.#expiresAfterMs;
    if (batch.cancelAt !== null) {
      batch.results = batch.requests.map(({ custom_id }) => ({ custom_id, result: { type: "canceled" } }));
      batch.endedAt = batch.cancelAt;
      return;
    }
    if (readyAt >= expiresAt && now >= expiresAt) {
      batch.results = batch.requests.map(({ custom_id }) => ({ custom_id, result: { type: "expired" } }));
      batch.endedAt = expiresAt;
      return;
    }
    if (now < readyAt) return;
    batch.running ??= this.#process(state, batch, readyAt);
    await batch.running;
  }

  async #process(state: SimState, batch: Batch, endedAt: number): Promise<void> {
    const { end, errors } = scriptFor(this.#script, batch.ordinal);
    const results: { custom_id: string; result: Result }[] = [];
    for (const [index, request] of batch.requests.entries()) {
      const { custom_id } = request;
      if (end !== undefined && index >= end.after) {
        // Scripted: the batch expired or was canceled before this request ran.
        results.push({ custom_id, result: { type: end.kind === "expire" ? "expired" : "canceled" } });
        continue;
      }
      const status = errors.get(index + 1);
      if (status !== undefined) {
        const error = apiError(status, `scripted error for entry ${index + 1} of batch ${batch.ordinal}`);
        const record = batchRecord(state, batch, custom_id, JSON.stringify(request.params));
        record.status = status;
        record.error = { type: error.type, message: error.message };
        results.push({
          custom_id,
          result: { type: "errored", error: { type: "error", error: errorObject(error) } },
        });
        continue;
      }
      results.push({ custom_id, result: await runOne(state, batch, request) });
    }
    if (end?.kind === "cancel") batch.cancelAt = endedAt;
    batch.results = results;
    batch.endedAt = endedAt;
  }

  #view(batch: Batch, baseUrl: string): object {
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    if (batch.results === null) counts.processing = batch.requests.length;
    else for (const { result } of batch.results) counts[result.type]++;
    const ended = batch.endedAt !== null;
    const iso = (ms: number) => new Date(ms).toISOString();
    return {
      id: batch.id,
      type: "message_batch",
      processing_status: ended ? "ended" : batch.cancelAt !== null ? "canceling" : "in_progress",
      request_counts: counts,
      ended_at: ended ? iso(batch.endedAt ?? 0) : null,
      created_at: iso(batch.createdAt),
      expires_at: iso(batch.createdAt + this.#expiresAfterMs),
      archived_at: null,
      cancel_initiated_at: batch.cancelAt === null ? null : iso(batch.cancelAt),
      results_url: ended ? `${baseUrl}/v1/messages/batches/${batch.id}/results` : null,
    };
  }
}

/** One request of a batch, run as `POST /v1/messages` would run it, at the batch price. */
async function runOne(
  state: SimState,
  batch: Batch,
  request: { custom_id: string; params: Record<string, unknown> },
): Promise<Result> {
  const record = batchRecord(state, batch, request.custom_id, JSON.stringify(request.params));
  const errored = (error: ApiError): Result => {
    record.status = error.status;
    record.error = { type: error.type, message: error.message };
    return { type: "errored", error: { type: "error", error: errorObject(error) } };
  };
  if (request.params.stream === true) {
    // Batch requests cannot stream (batch processing page); wording UNCONFIRMED.
    return errored(invalidRequest("stream: streaming is not supported for requests in a message batch"));
  }
  const valid = validateMessagesRequest(request.params, {
    registry: state.registry,
    version: batch.version,
    betas: batch.betas,
    issuedThinking: state.issuedThinking,
    files: state.files.lookup(batch.apiKey, state.clock()),
    images: state.web.images,
  });
  if (!valid.ok) return errored(valid.error);
  const { body, model } = valid.value;
  record.model = body.model;
  let turn: BrainTurn;
  const requestDigest = createHash("sha256").update(record.rawBody).digest("hex");
  try {
    turn = await brainTurn({
      brain: state.brain,
      body,
      querySource: null,
      seed: state.seed,
      apiKey: batch.apiKey,
      web: state.web,
      requestDigest,
      now: state.clock(),
    });
  } catch (error) {
    return errored(apiError(500, `simulator brain failed: ${(error as Error).message}`));
  }
  const constrained = constrainReply(turn.reply, body, state.schemaChecker);
  const built = buildReply(constrained.reply, {
    body,
    seed: state.seed,
    requestDigest,
    cut: false,
    contextRoom: model.contextWindow - valid.value.layout.totalTokens,
    tokenFactor: model.tokenFactor ?? 1,
    forcedToolUse: constrained.forcedToolUse,
    displayDefault: model.displayDefault ?? "summarized",
  });
  const account = state.cache.account({
    scope: batch.apiKey,
    arrival: state.cache.arrive(),
    modelId: model.id,
    layout: valid.value.layout,
    breakpoints: valid.value.breakpoints,
    minCacheableTokens: model.minCacheableTokens,
  });
  account.commit();
  const usage = {
    ...account.usage,
    output_tokens: built.outputTokens,
    ...(turn.serverToolUse ? { server_tool_use: turn.serverToolUse } : {}),
  };
  record.usage = usage;
  record.costUsd = costUsd(model, usage) * BATCH_DISCOUNT;
  record.status = 200;
  state.messageCounter++;
  const id = `msg_sim_${state.messageCounter.toString(36)}${randomBytes(8).toString("hex")}`;
  const message = messageBody(
    { id, model: model.id, diagnostics: null, contextManagement: null },
    built,
    usage,
  );
  return { type: "succeeded", message: { ...message, usage: { ...usage, service_tier: "batch" } } };
}

/** Each batch request gets a record (path `/v1/messages/batches/{id}#custom_id`) with its cost. */
function batchRecord(state: SimState, batch: Batch, customId: string, rawBody: string): RequestRecord {
  const now = state.clock();
  const record: RequestRecord = {
    id: `${batch.id}#${customId}`,
    path: `/v1/messages/batches/${batch.id}#${customId}`,
    headers: {},
    rawBody,
    model: null,
    stream: false,
    status: 0,
    querySource: null,
    usage: null,
    costUsd: 0,
    latencyMs: 0,
    fault: null,
    error: null,
    startedAt: now,
    firstByteAt: now,
    endedAt: now,
  };
  addRecord(state, record);
  return record;
}

/** Wording UNCONFIRMED. */
function notFound(id: string): ApiError {
  return apiError(404, `message_batch_id: ${id} not found`);
}

/** A list page: `limit` (1–1000, default 20), `before_id`/`after_id`, newest first. */
export function page<T extends { id: string }>(items: readonly T[], query: URLSearchParams): object {
  const limit = Math.min(1000, Math.max(1, Number(query.get("limit") ?? 20) || 20));
  const after = query.get("after_id");
  const before = query.get("before_id");
  let start = 0;
  let end = items.length;
  if (after !== null) start = items.findIndex((item) => item.id === after) + 1;
  if (before !== null)
    end = Math.max(
      0,
      items.findIndex((item) => item.id === before),
    );
  const window =
    before !== null ? items.slice(Math.max(start, end - limit), end) : items.slice(start, start + limit);
  const hasMore = before !== null ? end - limit > start : start + limit < end;
  return {
    data: window,
    has_more: hasMore,
    first_id: window[0]?.id ?? null,
    last_id: window.at(-1)?.id ?? null,
  };
}
