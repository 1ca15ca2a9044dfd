import { createHash, randomBytes } from "node:crypto";
import { costUsd, getModelInfo, type ModelInfo } from "@forkloop/loop-core";
import type { ModelTransport, TransportedRequest, TransportedResponse } from "@forkloop/orchestrator";
import type { ItemExecution, ItemExecutor, ItemOutcome } from "./batch-runner.js";
import type { JournaledEntry, MessageBatchJournal, SendingBatch } from "./message-batch-journal.js";
import { messageAsEventStream } from "./message-stream-events.js";

/**
 * R-B8: `forkloop batch --api batches`. Every item still runs its own loop in the worker pool;
 * its model requests come here (the pool's `modelTransport`) instead of going out one by one.
 * A round is the next request of every item that is ready: once each running item has one
 * waiting (or `roundWaitMs` after the first, so a slow tool holds no round up), they go out as
 * one Message Batch — several when a round passes the API's count or size limit — whose id is
 * journaled before it is polled. When it ends, each entry's result is the answer its item's loop
 * reads (as the event stream it asked for); tools then run locally and the next round forms.
 * Batch processing page (https://platform.claude.com/docs/en/build-with-claude/batch-processing):
 * at most 100,000 requests or 256 MB a batch, results once the whole batch has ended, entries
 * `succeeded` / `errored` / `canceled` / `expired`, every token at 50% of the standard price, and
 * the 1-hour cache duration suggested for batches that share context.
 */

/** The calls of `client.messages.batches` this uses (the official SDK's shape). */
export interface MessageBatchesClient {
  create(
    body: { requests: { custom_id: string; params: Record<string, unknown> }[] },
    options?: { headers?: Record<string, string> },
  ): PromiseLike<{ id: string }>;
  retrieve(id: string): PromiseLike<BatchView>;
  results(id: string): PromiseLike<AsyncIterable<EntryResultLine>>;
  cancel(id: string): PromiseLike<BatchView>;
  /** The endpoint's batches, newest first (a page of the list endpoint). */
  list(query: { limit: number }): PromiseLike<{ data: BatchView[] }>;
}

export interface BatchView {
  readonly id: string;
  readonly processing_status: string;
  readonly created_at?: string;
  readonly expires_at?: string;
  readonly request_counts: {
    readonly processing: number;
    readonly succeeded: number;
    readonly errored: number;
    readonly canceled: number;
    readonly expired: number;
  };
}

export interface EntryResultLine {
  readonly custom_id: string;
  readonly result:
    | { readonly type: "succeeded"; readonly message: unknown }
    | { readonly type: "errored"; readonly error: unknown }
    | { readonly type: "canceled" }
    | { readonly type: "expired" };
}

export type RoundEvent =
  | {
      readonly type: "round_sent";
      readonly round: number;
      readonly batchId: string;
      readonly entries: number;
    }
  | { readonly type: "round_resumed"; readonly batchId: string }
  | {
      readonly type: "round_ended";
      readonly batchId: string;
      readonly counts: BatchView["request_counts"];
    }
  | { readonly type: "round_split"; readonly entries: number; readonly reason: string }
  | {
      /** Now and then while a batch processes: how long it has, and when it may end. */
      readonly type: "round_waiting";
      readonly batchId: string;
      readonly entries: number;
      readonly elapsedMs: number;
      /** What is left by this run's earlier rounds' processing times, or undefined before one ended. */
      readonly etaMs: number | undefined;
      readonly expiresAt: string | undefined;
    }
  | {
      readonly type: "round_unconfirmed";
      readonly round: number;
      readonly entries: number;
      /** The endpoint's batch taken for it, or none (the create never reached the API). */
      readonly batchId: string | undefined;
    };

export interface MessageBatchRoundsOptions {
  readonly client: MessageBatchesClient;
  readonly journal: MessageBatchJournal;
  /** How often an open batch is polled (default 30 s; the simulator's tests use a few ms). */
  readonly pollMs?: number;
  /** The longest a round waits for items still running tools (default 10 s). */
  readonly roundWaitMs?: number;
  /** Limits of one batch (default the API's: 100,000 entries, 256 MB). */
  readonly maxEntries?: number;
  readonly maxBytes?: number;
  /** How often a processing batch is reported (`round_waiting`; default 60 s). */
  readonly progressEveryMs?: number;
  /** Prices of the models (a models file's overrides), for the saving. */
  readonly modelOverrides?: readonly ModelInfo[];
  readonly onEvent?: (event: RoundEvent) => void;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** The API's limits of one Message Batch (batch processing page). */
const MAX_BATCH_ENTRIES = 100_000;
const MAX_BATCH_BYTES = 256 * 1024 * 1024;

interface Waiting {
  readonly item: string;
  readonly params: Record<string, unknown>;
  readonly digest: string;
  readonly betas: readonly string[];
  readonly bytes: number;
  readonly signal: AbortSignal;
  readonly resolve: (response: TransportedResponse) => void;
}

/** What an item's requests cost at batch prices, and what the same tokens cost online. */
export interface BatchSaving {
  readonly batchCostUsd: number;
  readonly onlineCostUsd: number;
}

export class MessageBatchRounds {
  readonly #options: MessageBatchRoundsOptions;
  readonly #pending: Waiting[] = [];
  /** Items running now (tracked by `track`). */
  readonly #active = new Set<string>();
  /** Items with a request in a batch that has not answered yet. */
  readonly #inFlight = new Map<string, number>();
  /** Earlier runs' entries not yet used again, by item and request digest. */
  readonly #reusable = new Map<string, { batchId: string; customId: string }[]>();
  readonly #results = new Map<string, Promise<Map<string, EntryResultLine["result"]> | string>>();
  readonly #savings = new Map<string, BatchSaving>();
  readonly #open = new Set<string>();
  readonly #resumed = new Set<string>();
  #round: number;
  #timer: NodeJS.Timeout | undefined;
  #entrySeq = 0;
  /** Makes this run's custom ids its own, so a batch found after a crash is known by its entries. */
  readonly #runTag = randomBytes(4).toString("hex");
  #recovered: Promise<void> | undefined;
  /** How long each batch of this run took from its first poll to its end: the next rounds' ETA. */
  readonly #roundMs: number[] = [];
  #closed = false;

  constructor(options: MessageBatchRoundsOptions) {
    this.#options = options;
    this.#round = options.journal.sent.reduce((max, batch) => Math.max(max, batch.round), 0);
    for (const batch of options.journal.sent) this.#reuse(batch.batchId, batch.entries);
  }

  #reuse(batchId: string, entries: readonly JournaledEntry[]): void {
    for (const entry of entries) {
      const key = reuseKey(entry.item, entry.digest);
      const list = this.#reusable.get(key) ?? [];
      list.push({ batchId, customId: entry.customId });
      this.#reusable.set(key, list);
    }
  }

  /**
   * R-B10: a round recorded as sending with no batch id is a run killed between creating the
   * batch and journaling it. The endpoint's batch created after the record with as many entries
   * is taken for it (journaled, then polled like any sent batch); its results name our custom
   * ids, so a wrong guess answers no entry and each is sent again in a later round. None found:
   * the create never reached the API, and the requests go in a round of their own.
   */
  async #recoverUnconfirmed(): Promise<void> {
    const { journal, client } = this.#options;
    const unconfirmed = journal.unconfirmed();
    if (unconfirmed.length === 0) return;
    let listed: BatchView[] = [];
    try {
      listed = (await client.list({ limit: 100 })).data;
    } catch {
      // Not listable now: sending again costs one round twice, never a result used twice.
    }
    const known = new Set(journal.sent.map((batch) => batch.batchId));
    for (const round of unconfirmed) {
      const found = candidateFor(round, listed, known);
      if (found !== undefined) {
        known.add(found);
        await journal.record({
          kind: "sent",
          batchId: found,
          round: round.round,
          at: round.at,
          entries: round.entries,
        });
        this.#reuse(found, round.entries);
      }
      this.#options.onEvent?.({
        type: "round_unconfirmed",
        round: round.round,
        entries: round.entries.length,
        batchId: found,
      });
    }
  }

  /** The pool's `modelTransport`. */
  readonly transport: ModelTransport = (request, signal) => this.#send(request, signal);

  /** Batches sent and not yet read to the end (a second Ctrl+C cancels them). */
  openBatches(): string[] {
    return [...this.#open];
  }

  /** Cancels every open batch; resolves with the ids it cancelled. */
  async cancelOpen(): Promise<string[]> {
    const ids = this.openBatches();
    await Promise.all(
      ids.map((id) => Promise.resolve(this.#options.client.cancel(id)).catch(() => undefined)),
    );
    return ids;
  }

  /** An item's spend at batch prices and the online price of the same tokens. */
  savingOf(itemId: string): BatchSaving | undefined {
    return this.#savings.get(itemId);
  }

  /** Wraps the executor so the rounds know which items are running (a round waits for them). */
  track(executor: ItemExecutor): ItemExecutor {
    return {
      startAll: (claims, warm): ItemExecution[] => {
        for (const claim of claims) this.#active.add(claim.item.id);
        return executor.startAll(claims, warm).map((execution, index) => {
          const id = claims[index]!.item.id;
          const result = execution.result
            .then((outcome) => this.#withSaving(id, outcome))
            .finally(() => {
              this.#active.delete(id);
              this.#maybeFlush();
            });
          return { ...execution, result };
        });
      },
    };
  }

  /** The item's result with what its tokens would have cost online (its cost is at batch prices). */
  #withSaving(id: string, outcome: ItemOutcome): ItemOutcome {
    const saving = this.#savings.get(id);
    if (outcome.ok === "cancelled" || outcome.result === undefined || saving === undefined) return outcome;
    const onlineCostUsd = outcome.result.costUsd - saving.batchCostUsd + saving.onlineCostUsd;
    return { ...outcome, result: { ...outcome.result, onlineCostUsd } };
  }

  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
  }

  async #send(request: TransportedRequest, signal: AbortSignal): Promise<TransportedResponse> {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(request.body) as Record<string, unknown>;
    } catch {
      return errorResponse(400, "invalid_request_error", "the model request was not JSON");
    }
    const { stream: _stream, ...rest } = body;
    const params = withLongPrefixTtl(rest);
    this.#recovered ??= this.#recoverUnconfirmed();
    await this.#recovered;
    const item = itemOf(request.agentId);
    const digest = digestOf(params);
    const reused = this.#reusable.get(reuseKey(item, digest))?.shift();
    if (reused) {
      // R-B8: an earlier run sent this very request; its batch is polled, not sent again.
      if (!this.#resumed.has(reused.batchId)) {
        this.#resumed.add(reused.batchId);
        this.#options.onEvent?.({ type: "round_resumed", batchId: reused.batchId });
      }
      this.#inFlight.set(item, (this.#inFlight.get(item) ?? 0) + 1);
      try {
        return await this.#answer(item, reused.batchId, reused.customId, String(params.model ?? ""));
      } finally {
        this.#leave(item);
      }
    }
    const betas = (request.headers["anthropic-beta"] ?? "")
      .split(",")
      .map((b) => b.trim())
      .filter(Boolean);
    return new Promise<TransportedResponse>((resolve) => {
      const waiting: Waiting = {
        item,
        params,
        digest,
        betas,
        bytes: Buffer.byteLength(JSON.stringify(params)) + 100,
        signal,
        resolve,
      };
      this.#pending.push(waiting);
      signal.addEventListener(
        "abort",
        () => {
          const at = this.#pending.indexOf(waiting);
          if (at >= 0) this.#pending.splice(at, 1);
          resolve(errorResponse(499, "api_error", "the request was abandoned"));
          this.#maybeFlush();
        },
        { once: true },
      );
      this.#maybeFlush();
    });
  }

  /** A round goes once every running item not waiting on a batch has a request ready. */
  #maybeFlush(): void {
    if (this.#closed || this.#pending.length === 0) return;
    const waitingItems = new Set(this.#pending.map((w) => w.item));
    let ready = 0;
    for (const item of this.#active) if (!this.#inFlight.has(item)) ready++;
    if (this.#active.size > 0 && waitingItems.size >= ready) {
      this.#flush();
      return;
    }
    this.#timer ??= setTimeout(() => this.#flush(), this.#options.roundWaitMs ?? 10_000);
  }

  #flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const round = this.#pending.splice(0);
    if (round.length === 0) return;
    this.#round++;
    for (const chunk of chunks(
      round,
      this.#options.maxEntries ?? MAX_BATCH_ENTRIES,
      this.#options.maxBytes ?? MAX_BATCH_BYTES,
    )) {
      void this.#sendBatch(this.#round, chunk);
    }
  }

  async #sendBatch(round: number, entries: Waiting[]): Promise<void> {
    for (const w of entries) this.#inFlight.set(w.item, (this.#inFlight.get(w.item) ?? 0) + 1);
    const done = (w: Waiting, response: TransportedResponse) => {
      this.#leave(w.item);
      w.resolve(response);
    };
    const requests = entries.map((w) => ({ custom_id: this.#customId(w.item), params: w.params }));
    const betas = [...new Set(entries.flatMap((w) => w.betas))];
    const journaled: JournaledEntry[] = entries.map((w, i) => ({
      customId: requests[i]!.custom_id,
      item: w.item,
      digest: w.digest,
    }));
    try {
      await this.#options.journal.record({
        kind: "sending",
        round,
        at: new Date().toISOString(),
        entries: journaled,
      });
    } catch (error) {
      // Nothing sent yet: each item's loop sees the error, as it would a failed request.
      for (const w of entries) done(w, journalFailure(error));
      return;
    }
    let batchId: string;
    try {
      const created = await this.#options.client.create(
        { requests },
        betas.length === 0 ? undefined : { headers: { "anthropic-beta": betas.join(",") } },
      );
      batchId = created.id;
    } catch (error) {
      const status = (error as { status?: number }).status;
      if (
        (status === 413 || status === 400) &&
        entries.length > 1 &&
        /too large|size|exceed/i.test(String(error))
      ) {
        // Never refused whole: a round the API finds too large goes as two halves.
        this.#options.onEvent?.({
          type: "round_split",
          entries: entries.length,
          reason: String((error as Error).message),
        });
        for (const w of entries) this.#leave(w.item);
        const half = Math.ceil(entries.length / 2);
        await Promise.all([
          this.#sendBatch(round, entries.slice(0, half)),
          this.#sendBatch(round, entries.slice(half)),
        ]);
        return;
      }
      // The create failed: each item's loop sees the API's error and retries it as it would online.
      // An answered refusal created no batch, so a resume has none to look for.
      if (status !== undefined)
        await this.#options.journal
          .record({ kind: "unsent", customId: journaled[0]!.customId })
          .catch(() => {});
      const response = createFailure(error);
      for (const w of entries) done(w, response);
      return;
    }
    try {
      await this.#options.journal.record({
        kind: "sent",
        batchId,
        round,
        at: new Date().toISOString(),
        entries: journaled,
      });
    } catch (error) {
      // Not journaled, not polled: a resume could not find it, so stop before using it twice.
      await Promise.resolve(this.#options.client.cancel(batchId)).catch(() => undefined);
      for (const w of entries) done(w, journalFailure(error));
      return;
    }
    this.#options.onEvent?.({ type: "round_sent", round, batchId, entries: entries.length });
    await Promise.all(
      entries.map(async (w, i) => {
        done(w, await this.#answer(w.item, batchId, requests[i]!.custom_id, String(w.params.model ?? "")));
      }),
    );
  }

  /** Polls the batch (once for all its entries) and answers one entry as its HTTP response. */
  async #answer(
    item: string,
    batchId: string,
    customId: string,
    model: string,
  ): Promise<TransportedResponse> {
    let results = this.#results.get(batchId);
    if (!results) {
      results = this.#pollToEnd(batchId);
      this.#results.set(batchId, results);
    }
    const read = await results;
    if (typeof read === "string") return errorResponse(500, "api_error", read);
    const result = read.get(customId);
    const where = `Message Batch ${batchId} entry ${customId}`;
    if (!result) return errorResponse(500, "api_error", `${where} has no result`);
    switch (result.type) {
      case "succeeded": {
        const message = result.message as Parameters<typeof messageAsEventStream>[0];
        this.#addSaving(item, model, message.usage);
        return {
          status: 200,
          headers: { "content-type": "text/event-stream", "request-id": `${batchId}#${customId}` },
          body: messageAsEventStream(message),
        };
      }
      case "errored":
        return erroredResponse(result.error, where);
      default:
        // Unanswered: the loop retries it like a server error, and the retry joins the next round.
        return errorResponse(500, "api_error", `${where} was ${result.type} before it ran`);
    }
  }

  async #pollToEnd(batchId: string): Promise<Map<string, EntryResultLine["result"]> | string> {
    const { client } = this.#options;
    const sleep = this.#options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    const pollMs = this.#options.pollMs ?? 30_000;
    const progressEveryMs = this.#options.progressEveryMs ?? 60_000;
    const started = Date.now();
    let reported = started;
    this.#open.add(batchId);
    try {
      for (let failures = 0; ; ) {
        let view: BatchView;
        try {
          view = await client.retrieve(batchId);
          failures = 0;
        } catch (error) {
          const status = (error as { status?: number }).status;
          if (status === 404) return `Message Batch ${batchId} is not found at this endpoint`;
          if (++failures > 20) return `polling Message Batch ${batchId} failed: ${(error as Error).message}`;
          await sleep(Math.min(pollMs * failures, 60_000));
          continue;
        }
        if (view.processing_status === "ended") {
          const results = new Map<string, EntryResultLine["result"]>();
          for await (const line of await client.results(batchId)) results.set(line.custom_id, line.result);
          await this.#options.journal
            .record({ kind: "ended", batchId, at: new Date().toISOString() })
            .catch(() => {});
          this.#options.onEvent?.({ type: "round_ended", batchId, counts: view.request_counts });
          this.#roundMs.push(Date.now() - started);
          return results;
        }
        if (Date.now() - reported >= progressEveryMs) {
          reported = Date.now();
          this.#options.onEvent?.(this.#waiting(view, reported - started));
        }
        await sleep(pollMs);
      }
    } finally {
      this.#open.delete(batchId);
    }
  }

  /**
   * The API's counts stay at `processing` until the whole batch ends (Message Batches reference:
   * request_counts), so the ETA comes from this run's earlier rounds, not from the counts.
   */
  #waiting(view: BatchView, elapsedMs: number): RoundEvent {
    const typical =
      this.#roundMs.length === 0
        ? undefined
        : this.#roundMs.reduce((sum, ms) => sum + ms, 0) / this.#roundMs.length;
    return {
      type: "round_waiting",
      batchId: view.id,
      entries: Object.values(view.request_counts).reduce((sum, n) => sum + n, 0),
      elapsedMs,
      etaMs: typical === undefined ? undefined : Math.max(0, typical - elapsedMs),
      expiresAt: view.expires_at,
    };
  }

  #leave(item: string): void {
    const left = (this.#inFlight.get(item) ?? 1) - 1;
    if (left <= 0) this.#inFlight.delete(item);
    else this.#inFlight.set(item, left);
  }

  #customId(item: string): string {
    this.#entrySeq++;
    // `^[a-zA-Z0-9_-]{1,64}$`; unique within the run by the sequence number, and across runs by its tag.
    const safe = item.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 40);
    return `${safe}-${this.#runTag}-${this.#entrySeq.toString(36)}`;
  }

  #addSaving(item: string, model: string, usage: Record<string, unknown> | undefined): void {
    if (!usage) return;
    const info = getModelInfo(model, this.#options.modelOverrides);
    const typed = usage as Parameters<typeof costUsd>[1];
    const batch = costUsd(info, typed);
    const online = costUsd(info, { ...typed, service_tier: "standard" });
    const sofar = this.#savings.get(item) ?? { batchCostUsd: 0, onlineCostUsd: 0 };
    this.#savings.set(item, {
      batchCostUsd: sofar.batchCostUsd + batch,
      onlineCostUsd: sofar.onlineCostUsd + online,
    });
  }
}

/** A batch item's agent id is `item-<item id>-<attempt>`: the item survives a resume, the attempt not. */
function itemOf(agentId: string): string {
  return /^item-(.*)-\d+$/.exec(agentId)?.[1] ?? agentId;
}

/** Clocks of the endpoint and this machine may differ by this much. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

/** The oldest batch not journaled, created after the round was recorded, with as many entries. */
function candidateFor(
  round: SendingBatch,
  listed: readonly BatchView[],
  known: ReadonlySet<string>,
): string | undefined {
  const after = Date.parse(round.at) - CLOCK_SKEW_MS;
  const size = (view: BatchView) => Object.values(view.request_counts).reduce((sum, n) => sum + n, 0);
  return listed
    .filter((view) => !known.has(view.id) && size(view) === round.entries.length)
    .filter((view) => view.created_at === undefined || Date.parse(view.created_at) >= after)
    .at(-1)?.id;
}

function reuseKey(item: string, digest: string): string {
  return `${item}\u0000${digest}`;
}

/** The request as it would be sent again: its params without `metadata` (a run's own ids). */
function digestOf(params: Record<string, unknown>): string {
  const { metadata: _metadata, ...rest } = params;
  return createHash("sha256").update(JSON.stringify(rest)).digest("hex");
}

/**
 * The shared prefix (tools and system, whose last system block carries the breakpoint) is
 * written with the 1-hour TTL: rounds can be minutes apart, past the default 5 minutes
 * (batch processing page). The items' own message breakpoints keep theirs.
 */
function withLongPrefixTtl(params: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(params.system)) return params;
  const system = (params.system as Record<string, unknown>[]).map((block) => {
    const control = block.cache_control as { type?: string; ttl?: string } | undefined;
    return control?.type === "ephemeral" && control.ttl === undefined
      ? { ...block, cache_control: { ...control, ttl: "1h" } }
      : block;
  });
  return { ...params, system };
}

function* chunks(round: Waiting[], maxEntries: number, maxBytes: number): Generator<Waiting[]> {
  let chunk: Waiting[] = [];
  let bytes = 0;
  for (const w of round) {
    if (chunk.length > 0 && (chunk.length >= maxEntries || bytes + w.bytes > maxBytes)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(w);
    bytes += w.bytes;
  }
  if (chunk.length > 0) yield chunk;
}

const STATUS_OF_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** An `errored` entry as the HTTP error the same request would have got online. */
function erroredResponse(error: unknown, where: string): TransportedResponse {
  const inner = (error as { error?: { type?: string; message?: string } } | undefined)?.error;
  const type = inner?.type ?? "api_error";
  return errorResponse(STATUS_OF_TYPE[type] ?? 500, type, `${inner?.message ?? "errored"} (${where})`);
}

function journalFailure(error: unknown): TransportedResponse {
  return errorResponse(500, "api_error", `the batch journal failed: ${(error as Error).message}`);
}

function createFailure(error: unknown): TransportedResponse {
  const e = error as { status?: number; error?: { error?: { type?: string } }; message?: string };
  const status = typeof e.status === "number" ? e.status : 500;
  return errorResponse(
    status,
    e.error?.error?.type ?? "api_error",
    `creating a Message Batch failed: ${e.message ?? String(error)}`,
  );
}

function errorResponse(status: number, type: string, message: string): TransportedResponse {
  return {
    status,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "error", error: { type, message } }),
  };
}
