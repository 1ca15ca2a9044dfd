import { type UsageTotals, ZERO_USAGE_TOTALS } from "@forkloop/loop-core";
import type { Redis } from "ioredis";
import { z } from "zod";
import { describeIssues, safeIdSchema } from "./batch-setting-checks.js";
import { batchSpecSchema } from "./batch-store.js";
import { parseSeal } from "./enqueue-seal.js";
import type { EnqueueSeal, ItemError, ItemResult, ItemState, JobItem } from "./job-backend.js";
import {
  itemErrorSchema,
  itemResultSchema,
  jobItemSchema,
  stripUndefined,
  stripUndefinedError,
  usageTotalsSchema,
} from "./local-journal-backend.js";

/**
 * What the BullMQ backend keeps in Redis next to BullMQ's own keys (R-B1): the batch's
 * settings (so a worker or a `--resume` on any host needs nothing else), its items in order, and
 * the exactly-once results. BullMQ delivers at least once — a worker that loses its lock has its
 * job run again — so a result is recorded with an atomic compare-and-set keyed by item (the job
 * id is batch id + item id): the first completion wins, a later one is dropped and counted.
 */

/** BullMQ key prefix; our own keys live under `forkloop:batch:<id>:…` beside it. */
export const QUEUE_PREFIX = "forkloop";
/** One items queue per Redis: `forkloop worker` serves every batch enqueued on it. */
export const ITEMS_QUEUE = "items";

/** The parent job's queue: one per batch, processed by the batch's producer (`forkloop batch`). */
export function batchQueueName(batchId: string): string {
  return `batch-${batchId}`;
}

/** Deterministic, so enqueueing a batch again is a no-op in BullMQ (ids must not contain ":"). */
export function itemJobId(batchId: string, itemId: string): string {
  return `${batchId}.${itemId}`;
}

export function itemIdOfJob(batchId: string, jobId: string): string | undefined {
  if (!jobId.startsWith(`${batchId}.`)) return undefined;
  // A retry round's job (`retryJobId`): "~" is in no id, so the suffix is never part of one.
  return jobId.slice(batchId.length + 1).replace(/~r\d+$/, "");
}

/**
 * R-B4 `--retry-conflicts`: round `round`'s job of an item put back on the queue — an id of its
 * own, since the item's first job (completed) keeps its id in BullMQ.
 */
export function retryJobId(batchId: string, itemId: string, round: number): string {
  return `${itemJobId(batchId, itemId)}~r${round}`;
}

/** The parent job of a batch's round: the batch id for its first, then one per retry round. */
export function roundParentId(batchId: string, round: number): string {
  return round === 0 ? batchId : `${batchId}~r${round}`;
}

function keys(batchId: string) {
  const base = `${QUEUE_PREFIX}:batch:${batchId}`;
  return {
    settings: `${base}:settings`,
    items: `${base}:items`,
    enqueued: `${base}:enqueued`,
    results: `${base}:results`,
    executions: `${base}:executions`,
    stats: `${base}:stats`,
    requests: `${base}:requests`,
    runs: `${base}:runs`,
    changes: `${base}:changes`,
    retries: `${base}:retries`,
    reduce: `${base}:reduce`,
    reduceLease: `${base}:reduce-lease`,
  };
}

/** The batch's request log (request-limiter.ts): every worker of the batch counts into it. */
export function requestLogKey(batchId: string): string {
  return keys(batchId).requests;
}

/**
 * A server a queued batch's items may use, by name only (R-M1, R-B1): a stdio server is a
 * command line, and a worker never starts one it read from Redis (whoever can write to the queue
 * would run code on every worker host). Each worker starts the server of that name from its own
 * configuration; the transport only makes messages clearer.
 */
const queuedMcpServerSchema = z.object({
  // Config names are free text (tool names normalise them); bounded, and no control characters.
  name: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^\p{Cc}]+$/u, "a server name has no control characters"),
  transport: z.enum(["stdio", "http", "sse", "sdk"]),
});
export type QueuedMcpServer = z.infer<typeof queuedMcpServerSchema>;

/** A queued batch: its spec plus the retry policy every worker applies to its items. */
export const queuedBatchSchema = z.object({
  spec: batchSpecSchema,
  /** Runs per item before it counts as failed (BullMQ `attempts`; `--attempts` at most 100). */
  attempts: z.number().int().min(1).max(100),
  /** First retry delay; doubles per attempt (BullMQ exponential backoff). */
  backoffMs: z.number().int().nonnegative(),
  /** `--rpm`: model requests per minute across every worker of the batch (R-B1). */
  rpm: z.number().int().min(1).max(1_000_000).optional(),
  /** The MCP servers its items may use, by name (never a command, URL or header). */
  mcpServers: z.array(queuedMcpServerSchema).max(100).optional(),
  /**
   * R-B2: items are isolated — each worker runs an item in a worktree of `base` (the commit the
   * batch was created at) and returns its change with the result; the producer applies it.
   */
  isolation: z
    .object({
      base: z.string().regex(/^[0-9a-f]{40,64}$/),
    })
    .optional(),
});
export type QueuedBatch = z.infer<typeof queuedBatchSchema>;

/**
 * An item job's data, as hostile as the settings (R-B1, trust): the item id names the item's
 * transcript file on the worker's host, so it is an id, never a path.
 */
export const itemJobDataSchema = z.object({
  batchId: safeIdSchema,
  item: jobItemSchema.extend({ id: safeIdSchema }),
  /** R-V5: the producer's batch span (W3C Trace Context); a malformed one is ignored, not refused. */
  traceparent: z.string().max(128).optional(),
  /**
   * R-B4: the commit an isolated item starts from when it is not the batch's base — a conflict
   * put back on the queue by `--retry-conflicts` runs on the producer's tree as it was then.
   */
  base: z
    .string()
    .regex(/^[0-9a-f]{40,64}$/)
    .optional(),
});
export type ItemJobData = z.infer<typeof itemJobDataSchema>;

const recordSchema = z.object({
  status: z.enum(["succeeded", "failed"]),
  result: itemResultSchema.optional(),
  error: itemErrorSchema.optional(),
});
type ResultRecord = z.infer<typeof recordSchema>;

/**
 * The settings that make two batches "the same batch": paths and times differ per host, and the
 * items are compared by id (an id is a hash of the file path or the JSONL line).
 */
function identity(batch: QueuedBatch, items: readonly JobItem[]) {
  // Where this host keeps it and how it names the queue are not the batch's settings.
  const {
    createdAt: _created,
    cwd: _cwd,
    outputDir: _output,
    source: _source,
    queue: _queue,
    ...settings
  } = batch.spec;
  return {
    ...settings,
    attempts: batch.attempts,
    backoffMs: batch.backoffMs,
    rpm: batch.rpm ?? "unlimited",
    mcpServers: (batch.mcpServers ?? []).map((server) => server.name),
    isolation: batch.isolation?.base ?? "none",
    items: items.map((i) => i.id),
  };
}

export type RegisterOutcome =
  | { readonly kind: "created" }
  | { readonly kind: "same"; readonly existing: QueuedBatch }
  | { readonly kind: "conflict"; readonly differences: readonly string[] };

/** Stores a new batch's settings and items once (SET NX); a second producer compares instead. */
export async function registerBatch(
  redis: Redis,
  batch: QueuedBatch,
  items: readonly JobItem[],
): Promise<RegisterOutcome> {
  const k = keys(batch.spec.id);
  const [[, created]] = (await redis
    .multi()
    .set(k.settings, JSON.stringify(batch), "NX")
    .set(k.items, JSON.stringify(items), "NX")
    .exec()) as [[Error | null, string | null]];
  if (created === "OK") return { kind: "created" };
  const existing = await readQueuedBatch(redis, batch.spec.id);
  if (existing.kind !== "found") {
    const why = existing.kind === "invalid" ? `: ${existing.problem}` : "";
    return { kind: "conflict", differences: [`the stored batch is unreadable${why}`] };
  }
  const ours = identity(batch, items);
  const theirs = identity(existing.batch, existing.items) as Record<string, unknown>;
  const differences = Object.entries(ours)
    .filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(theirs[key]))
    .map(([key]) => key);
  return differences.length === 0
    ? { kind: "same", existing: existing.batch }
    : { kind: "conflict", differences };
}

/** A batch as a worker finds it in Redis: its settings are checked as hostile input (R-B1). */
export type StoredBatch =
  | { readonly kind: "missing" }
  /** `problem` says what is wrong, for the items' recorded failure: `spec.maxTurns: …`. */
  | { readonly kind: "invalid"; readonly problem: string }
  | { readonly kind: "found"; readonly batch: QueuedBatch; readonly items: JobItem[] };

export async function readQueuedBatch(redis: Redis, batchId: string): Promise<StoredBatch> {
  const k = keys(batchId);
  const [settingsText, itemsText] = await redis.mget(k.settings, k.items);
  if (settingsText == null || itemsText == null) return { kind: "missing" };
  const settings = parseStored(settingsText, queuedBatchSchema, "its settings");
  if (!settings.ok) return { kind: "invalid", problem: settings.problem };
  // Settings copied from another batch would run under that batch's name and directories.
  if (settings.data.spec.id !== batchId) {
    return { kind: "invalid", problem: `its settings are batch ${JSON.stringify(settings.data.spec.id)}'s` };
  }
  const items = parseStored(itemsText, z.array(jobItemSchema), "its items");
  if (!items.ok) return { kind: "invalid", problem: items.problem };
  return { kind: "found", batch: settings.data, items: items.data };
}

function parseStored<T>(
  text: string,
  schema: z.ZodType<T>,
  what: string,
): { readonly ok: true; readonly data: T } | { readonly ok: false; readonly problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `${what} are not JSON (${(error as Error).message})` };
  }
  const parsed = schema.safeParse(json);
  return parsed.success
    ? { ok: true, data: parsed.data }
    : { ok: false, problem: `${what}: ${describeIssues(parsed.error)}` };
}

/** The batch, or undefined when Redis has none; invalid stored settings throw, naming the problem. */
export async function loadQueuedBatch(
  redis: Redis,
  batchId: string,
): Promise<{ batch: QueuedBatch; items: JobItem[] } | undefined> {
  const stored = await readQueuedBatch(redis, batchId);
  if (stored.kind === "missing") return undefined;
  if (stored.kind === "invalid")
    throw new Error(`batch ${batchId} on the queue is unreadable: ${stored.problem}`);
  return { batch: stored.batch, items: stored.items };
}

/** The batch's enqueue seal (R-B1): written once its flow is added. */
export async function readEnqueueSeal(
  redis: Redis,
  batchId: string,
): Promise<EnqueueSeal | "unverifiable" | undefined> {
  const text = await redis.get(keys(batchId).enqueued);
  return text === null ? undefined : parseSeal(text); // before seals: a timestamp, unverifiable
}

export async function writeEnqueueSeal(redis: Redis, batchId: string, seal: EnqueueSeal): Promise<void> {
  await redis.set(keys(batchId).enqueued, JSON.stringify(seal));
}

/** Counts one more execution of the item; the count is the attempt number of this run. */
export function beginExecution(redis: Redis, batchId: string, itemId: string): Promise<number> {
  return redis.hincrby(keys(batchId).executions, itemId, 1);
}

export async function hasResult(redis: Redis, batchId: string, itemId: string): Promise<boolean> {
  return (await redis.hexists(keys(batchId).results, itemId)) === 1;
}

// HSETNX is the compare-and-set: only the first settle of an item is kept. A later one (a
// re-run after a stall whose first run also finished) is dropped and counted, in one script so
// the count never disagrees with what was kept. R-R10: every settled run, kept or dropped, is
// also appended to the batch's runs stream with its usage, so the report counts what ran.
const RECORD_ONCE = `
local kept = redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then
  redis.call('XADD', KEYS[3], '*', 'item', ARGV[1], 'run', ARGV[3], 'kept', tostring(kept), 'usage', ARGV[4])
end
if kept == 1 then
  if ARGV[5] ~= '' then redis.call('HSET', KEYS[4], ARGV[1], ARGV[5]) end
  return 1
end
redis.call('HINCRBY', KEYS[2], 'duplicate_executions', 1)
return 0`;

/** One settled execution of an item on some worker (R-R10): what it cost, kept or not. */
export interface RunRecord {
  readonly itemId: string;
  /** Unique per execution (`<host>:<pid>:<job attempt>:<random>`). */
  readonly run: string;
  readonly kept: boolean;
  readonly usage: UsageTotals;
  readonly costUsd: number;
}

const runUsageSchema = z.object({ usage: usageTotalsSchema, costUsd: z.number() });

/**
 * Records an item's final outcome exactly once; false when it already had one (a duplicate).
 * `run` names this execution: the run and its usage go to the runs stream either way. `change`
 * (an isolated item's, `encodeChanges`) is kept with the result it belongs to, and only with it.
 */
export async function recordOutcome(
  redis: Redis,
  batchId: string,
  itemId: string,
  outcome:
    | { status: "succeeded"; result: ItemResult }
    | { status: "failed"; error: ItemError; result?: ItemResult },
  run?: string,
  change?: string,
): Promise<boolean> {
  const k = keys(batchId);
  const spent = JSON.stringify({
    usage: outcome.result?.usage ?? ZERO_USAGE_TOTALS,
    costUsd: outcome.result?.costUsd ?? 0,
  });
  const recorded = await redis.eval(
    RECORD_ONCE,
    4,
    k.results,
    k.stats,
    k.runs,
    k.changes,
    itemId,
    JSON.stringify(outcome),
    run ?? "",
    spent,
    change ?? "",
  );
  return recorded === 1;
}

// R-B4: a retry round takes back the results of its items (and their changes) once: the round
// number moves forward in the same script, so the producer that finishes a round another began
// (killed after its journal named the round) takes back nothing that was recorded since. The
// round is written first: a Redis that refuses writes (out of memory) refuses it before any
// result is taken back (a script's writes before a failed one stay).
const BEGIN_ROUND = `
local current = tonumber(redis.call('HGET', KEYS[3], 'round') or '0')
local round = tonumber(ARGV[1])
if current >= round then return 0 end
redis.call('HSET', KEYS[3], 'round', ARGV[1])
for i = 2, #ARGV do
  redis.call('HDEL', KEYS[1], ARGV[i])
  redis.call('HDEL', KEYS[2], ARGV[i])
end
return 1`;

/**
 * R-B4: begins retry round `round` for `itemIds` (their results and changes removed, so workers
 * run them again and record their new outcome once); false when Redis is at that round already.
 */
export async function beginRetryRound(
  redis: Redis,
  batchId: string,
  round: number,
  itemIds: readonly string[],
): Promise<boolean> {
  const k = keys(batchId);
  const begun = await redis.eval(BEGIN_ROUND, 3, k.results, k.changes, k.retries, String(round), ...itemIds);
  return begun === 1;
}

/** R-B4: the retry rounds the batch has had (0: none), and the last one whose jobs were all added. */
export async function readRetryRounds(
  redis: Redis,
  batchId: string,
): Promise<{ readonly round: number; readonly enqueued: number }> {
  const [round, enqueued] = await redis.hmget(keys(batchId).retries, "round", "enqueued");
  return { round: Number(round ?? 0), enqueued: Number(enqueued ?? 0) };
}

export async function sealRetryRound(redis: Redis, batchId: string, round: number): Promise<void> {
  await redis.hset(keys(batchId).retries, "enqueued", String(round));
}

/**
 * R-B7: the batch's reduce record as the last producer wrote it (reduce.json's text), so a
 * producer re-attached on another host keeps a finished reduce and runs an interrupted one once.
 */
export function readReduceRecord(redis: Redis, batchId: string): Promise<string | null> {
  return redis.get(keys(batchId).reduce);
}

export async function writeReduceRecord(redis: Redis, batchId: string, text: string): Promise<void> {
  await redis.set(keys(batchId).reduce, text);
}

/**
 * R-B7, R-B1: the claim on running a queued batch's reduce — `SET NX PX`: one producer at a time
 * holds it (`token`), renewing it while it runs; a holder that died (kill -9) stops renewing, so
 * it expires after `ttlMs` and the next producer takes it. True when this call took it.
 */
export async function claimReduceLease(
  redis: Redis,
  batchId: string,
  token: string,
  ttlMs: number,
): Promise<boolean> {
  return (await redis.set(keys(batchId).reduceLease, token, "PX", ttlMs, "NX")) === "OK";
}

const RENEW_LEASE = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`;
const RELEASE_LEASE = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`;

/** Extends the lease while `token` still holds it; false when it expired and is another's (or none's). */
export async function renewReduceLease(
  redis: Redis,
  batchId: string,
  token: string,
  ttlMs: number,
): Promise<boolean> {
  return Number(await redis.eval(RENEW_LEASE, 1, keys(batchId).reduceLease, token, String(ttlMs))) === 1;
}

/** Gives the lease up if `token` still holds it (never another producer's). */
export async function releaseReduceLease(redis: Redis, batchId: string, token: string): Promise<void> {
  await redis.eval(RELEASE_LEASE, 1, keys(batchId).reduceLease, token);
}

/** R-B2: the change an isolated item's recorded result carries (`encodeChanges`), if any. */
export function readChange(redis: Redis, batchId: string, itemId: string): Promise<string | null> {
  return redis.hget(keys(batchId).changes, itemId);
}

/** A run that settled nothing (a failed attempt BullMQ retries): its spend, for the report. */
export async function recordRun(
  redis: Redis,
  batchId: string,
  itemId: string,
  run: string,
  result: ItemResult,
): Promise<void> {
  const spent = JSON.stringify({ usage: result.usage, costUsd: result.costUsd });
  await redis.xadd(keys(batchId).runs, "*", "item", itemId, "run", run, "kept", "0", "usage", spent);
}

/**
 * The runs recorded after stream id `after` (exclusive; "-" for all), oldest first, and the id
 * to read on from. Entries that do not parse (written by hand) are skipped.
 */
export async function readRuns(
  redis: Redis,
  batchId: string,
  after: string,
): Promise<{ readonly runs: readonly RunRecord[]; readonly last: string }> {
  const start = after === "-" ? "-" : `(${after}`;
  const entries = (await redis.xrange(keys(batchId).runs, start, "+")) as [string, string[]][];
  const runs: RunRecord[] = [];
  let last = after;
  for (const [id, fields] of entries) {
    last = id;
    const field = (name: string) => fields[fields.indexOf(name) + 1];
    const spent = runUsageSchema.safeParse(safeJson(field("usage")));
    const itemId = field("item");
    const run = field("run");
    if (!spent.success || itemId === undefined || run === undefined) continue;
    runs.push({ itemId, run, kept: field("kept") === "1", ...spent.data });
  }
  return { runs, last };
}

function safeJson(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * R-R10: whether the batch's own keys are still in Redis. A Redis that restarted without
 * persistence, or evicted them, has lost the batch: a producer waiting on it would wait forever.
 */
export async function batchKeysPresent(redis: Redis, batchId: string): Promise<boolean> {
  const k = keys(batchId);
  return (await redis.exists(k.settings, k.items, k.enqueued)) === 3;
}

export interface QueuedBatchState {
  readonly states: readonly ItemState[];
  /** Completions dropped because the item already had a result (R-B1). */
  readonly duplicateExecutions: number;
}

/** Every item of the batch in enqueue order with its recorded outcome (pending if none yet). */
export async function readBatchState(redis: Redis, batchId: string): Promise<QueuedBatchState> {
  const k = keys(batchId);
  const [itemsText, results, executions, duplicates] = await Promise.all([
    redis.get(k.items),
    redis.hgetall(k.results),
    redis.hgetall(k.executions),
    redis.hget(k.stats, "duplicate_executions"),
  ]);
  const items = z.array(jobItemSchema).parse(JSON.parse(itemsText ?? "[]"));
  const states = items.map((item): ItemState => {
    const attempts = Number(executions[item.id] ?? 0);
    const text = results[item.id];
    if (text === undefined) return { item, status: "pending", attempts };
    const record: ResultRecord = recordSchema.parse(JSON.parse(text));
    return {
      item,
      status: record.status,
      attempts,
      ...(record.result === undefined ? {} : { result: stripUndefined(record.result) }),
      ...(record.error === undefined ? {} : { error: stripUndefinedError(record.error) }),
    };
  });
  return { states, duplicateExecutions: Number(duplicates ?? 0) };
}
