import { randomUUID } from "node:crypto";
import { ForkloopError } from "@forkloop/loop-core/errors";
import type { RequestGate, SubAgentEvent } from "@forkloop/orchestrator";
import type { ItemWorkspace, WorkspaceIsolation } from "@forkloop/tools/workspace";
import type { Job } from "bullmq";
import type { Redis } from "ioredis";
import type { ItemExecutor, ItemOutcome } from "./batch-runner.js";
import { describeIssues } from "./batch-setting-checks.js";
import type { Claim, ItemError } from "./job-backend.js";
import {
  beginExecution,
  hasResult,
  ITEMS_QUEUE,
  type ItemJobData,
  itemJobDataSchema,
  QUEUE_PREFIX,
  type QueuedBatch,
  readQueuedBatch,
  recordOutcome,
  recordRun,
  requestLogKey,
} from "./queue-store.js";
import { encodeChanges } from "./queued-change.js";
import { redisOutageReporter } from "./redis-outage.js";
import { limitedRequestGate, redisRequestLimiter } from "./request-limiter.js";
import { batchRefusal, CAUTIOUS_POLICY, type WorkerPolicy } from "./worker-policy.js";
import { type WorkspacePool, workspacePool } from "./workspace-pool.js";

/**
 * `forkloop worker` as a library (R-B1): a BullMQ worker on the items queue that runs
 * each item as a sub-agent in this process's worker pool. Any number of these, on any hosts,
 * share one Redis; each batch's settings come from Redis, and the first item of a batch on this
 * host warms the cache-safe prefix before its other items start (R-F4, per host).
 *
 * Delivery is BullMQ's: a job is locked while it runs (renewed at half of `lockDurationMs`); a
 * worker killed with `kill -9` stops renewing, and after the lock expires the next stalled check
 * (every `stalledIntervalMs`, on any worker) puts the job back to run elsewhere. Results are
 * recorded exactly once regardless (queue-store.ts `recordOutcome`).
 *
 * A batch's settings and job data are hostile input (R-B1, trust): a batch whose stored
 * settings are invalid, or that this worker's policy refuses, is never run — each of its items
 * is recorded as failed with the reason and fails with BullMQ's `UnrecoverableError` (no
 * retries), the worker says so once per batch and goes on serving the others.
 */
export interface QueueWorkerOptions {
  readonly connection: Redis;
  /** Items running at once in this process. */
  readonly concurrency: number;
  /** How long a running item's lock lasts without renewal (BullMQ default 30 s). */
  readonly lockDurationMs?: number;
  /** How often this worker looks for stalled jobs (BullMQ default 30 s). */
  readonly stalledIntervalMs?: number;
  /** Stalls an item survives before it fails (BullMQ default 1; here 3: a crash is not the item's fault). */
  readonly maxStalledCount?: number;
  /** What the operator lets batches do (default: no bypassPermissions). */
  readonly policy?: WorkerPolicy;
  /**
   * R-R9: asked for each failure; a message says it is this host's, not the item's — its key
   * refused, its endpoint unreachable or not the Messages API — so every item would fail here
   * alike. The item goes back to the queue (no attempt spent, nothing recorded), this worker takes
   * no more items, and `host_failure` says why: the items wait for a worker that can run them.
   */
  readonly stopOnFailure?: (error: ItemError, batch: QueuedBatch) => string | undefined;
  /** The executor for a batch this process has not seen yet, built with `wiring`. */
  executorFor(batch: QueuedBatch, wiring: ExecutorWiring): Promise<ItemExecutor>;
  /**
   * R-B2: where an isolated batch's items get their worktrees on this host (at the batch's base
   * commit, or at `base`: R-B4, a retry round's). Without it, isolated batches are refused. May
   * throw `BatchRefusedError`.
   */
  isolationFor?(batch: QueuedBatch, base?: string): Promise<WorkspaceIsolation>;
  readonly onEvent?: (event: QueueWorkerEvent) => void;
}

/** What a batch's executor must be given: the sub-agent event sink and the request gate. */
export interface ExecutorWiring {
  /** Must get every sub-agent event (warming and 429s are read from them). */
  readonly onEvent: (claim: Claim, event: SubAgentEvent) => void;
  /** The batch's `--rpm` limiter, queue-wide; undefined when the batch has no limit. */
  readonly requestSlot?: RequestGate;
}

export type QueueWorkerEvent =
  | {
      readonly type: "item_settled";
      readonly batchId: string;
      readonly claim: Claim;
      readonly outcome: Exclude<ItemOutcome, { ok: "cancelled" }>;
      /** False when another run of the item was recorded first (the result is dropped). */
      readonly recorded: boolean;
    }
  | {
      readonly type: "item_retry";
      readonly batchId: string;
      readonly claim: Claim;
      readonly error: ItemError;
    }
  | {
      readonly type: "rate_limited";
      readonly batchId: string;
      readonly claim: Claim;
      readonly retryAfterMs: number;
    }
  /** This process's requests started waiting on the batch's `--rpm` limit (once per stretch). */
  | {
      readonly type: "request_limited";
      readonly batchId: string;
      readonly rpm: number;
      readonly waitMs: number;
    }
  /** This worker runs none of the batch's items (`BatchRefusedError`); once per batch. */
  | { readonly type: "batch_refused"; readonly batchId: string; readonly error: ItemError }
  /** A job whose data is not an item of a batch (written to Redis by hand): failed, not run. */
  | { readonly type: "job_refused"; readonly jobId: string; readonly reason: string }
  | { readonly type: "error"; readonly message: string }
  /** R-R9: `stopOnFailure` named a failure of this host: it takes no more items (once). */
  | {
      readonly type: "host_failure";
      readonly batchId: string;
      readonly claim: Claim;
      readonly reason: string;
    };

export interface QueueWorker {
  /** Items this worker has taken and not finished yet. */
  running(): number;
  /** Stops taking items and waits for the running ones to finish and be recorded (SIGTERM). */
  close(): Promise<void>;
}

/**
 * Thrown by `executorFor` when this worker cannot run any item of the batch — it names an MCP
 * server this worker does not have, or one that failed to start here (R-M1, R-B1). BullMQ has
 * no routing by what a worker can do: a job handed back would come straight back to this worker
 * (holding its slots) and, when no worker can run it, the batch would never end. So each item
 * fails for good (`UnrecoverableError`, no retries) with this message as its recorded error,
 * which the producer shows as the item's failure; the worker says it once per batch and goes on
 * serving other batches. Workers of one queue are meant to be configured alike.
 */
export class BatchRefusedError extends ForkloopError {
  override readonly name = "BatchRefusedError";
  constructor(code: string, message: string) {
    super(message, { code });
  }
}

type BatchEntry = ReadyBatch | { readonly kind: "refused"; readonly error: ItemError };

interface ReadyBatch {
  readonly kind: "ready";
  readonly batch: QueuedBatch;
  readonly executor: ItemExecutor;
  /** Resolves once this host's first item of the batch has a response (its prefix is cached). */
  readonly warmed: Promise<void>;
  release(): void;
  started: boolean;
  /**
   * R-B2: each item's worktree comes from here when the batch is isolated: this worker's copies of
   * the batch, reused (reset to the base) from one item to the next, as a local batch's are.
   */
  readonly copies?: WorkspacePool;
  /** R-B4: the copies of retry rounds' items, by the round's base (made when the first one comes). */
  readonly rebased: Map<string, Promise<WorkspacePool>>;
}

/** Same rule as the pool's own warming: the response has started, so the cache entry is readable. */
function responseStarted(event: SubAgentEvent): boolean {
  return (
    (event.type === "usage" && event.phase === "start") || event.type === "text" || event.type === "done"
  );
}

export async function startQueueWorker(options: QueueWorkerOptions): Promise<QueueWorker> {
  // R-V2: BullMQ loads when a queue worker starts, not with the package (a local batch never does).
  const { Queue, UnrecoverableError, WaitingError, Worker } = await import("bullmq");
  const redis = options.connection;
  const onRedisError = redisOutageReporter(redis, (message) => options.onEvent?.({ type: "error", message }));
  const queue = new Queue(ITEMS_QUEUE, { connection: redis, prefix: QUEUE_PREFIX });
  queue.on("error", onRedisError);
  const batches = new Map<string, Promise<BatchEntry>>();
  // R-B2: the copies of every isolated batch this worker served, removed when it stops (and the
  // directory they were placed in, when that leaves it empty).
  const pools = new Map<WorkspacePool, WorkspaceIsolation>();
  const pooled = (isolation: WorkspaceIsolation) => {
    const pool = workspacePool(isolation);
    pools.set(pool, isolation);
    return pool;
  };
  let taken = 0;
  let stopped = false;

  const batchFor = (batchId: string): Promise<BatchEntry> => {
    let entry = batches.get(batchId);
    if (!entry) {
      entry = (async (): Promise<BatchEntry> => {
        const stored = await readQueuedBatch(redis, batchId);
        const refusal =
          stored.kind === "missing"
            ? "it has no settings in Redis"
            : stored.kind === "invalid"
              ? stored.problem
              : batchRefusal(stored.batch, options.policy ?? CAUTIOUS_POLICY);
        if (stored.kind !== "found" || refusal !== undefined) {
          const refused = {
            code: "batch_refused",
            message: `batch ${batchId} is not run by this worker: ${refusal}`,
          };
          options.onEvent?.({ type: "batch_refused", batchId, error: refused });
          return { kind: "refused", error: refused };
        }
        let release!: () => void;
        const warmed = new Promise<void>((resolve) => {
          release = resolve;
        });
        const onEvent = (claim: Claim, event: SubAgentEvent) => {
          if (responseStarted(event)) release();
          if (event.type === "rate_limited") {
            // A 429 pauses the whole queue, on every host, not just this process (R-B1).
            void queue.rateLimit(event.retryAfterMs).catch(() => {});
            options.onEvent?.({ type: "rate_limited", batchId, claim, retryAfterMs: event.retryAfterMs });
          }
        };
        const { rpm } = stored.batch;
        const requestSlot = rpm === undefined ? undefined : limitedRequests(batchId, rpm);
        let executor: ItemExecutor;
        let isolation: WorkspaceIsolation | undefined;
        try {
          if (stored.batch.isolation !== undefined) {
            if (options.isolationFor === undefined)
              throw new BatchRefusedError(
                "isolation_unavailable",
                `batch ${batchId} isolates its items, and this worker cannot make worktrees; run it with \`forkloop worker\` in a checkout of the batch's repository.`,
              );
            isolation = await options.isolationFor(stored.batch);
          }
          executor = await options.executorFor(stored.batch, {
            onEvent,
            ...(requestSlot === undefined ? {} : { requestSlot }),
          });
        } catch (error) {
          if (!(error instanceof BatchRefusedError)) throw error;
          const refused = { code: error.code, message: error.message };
          options.onEvent?.({ type: "batch_refused", batchId, error: refused });
          return { kind: "refused", error: refused };
        }
        return {
          kind: "ready",
          batch: stored.batch,
          executor,
          warmed,
          release,
          started: false,
          rebased: new Map(),
          ...(isolation === undefined ? {} : { copies: pooled(isolation) }),
        };
      })();
      entry.catch(() => batches.delete(batchId));
      batches.set(batchId, entry);
    }
    return entry;
  };

  /**
   * R-B1: every request of the batch's items asks the shared Redis limiter first. The
   * worker says so once when its requests start waiting, not once per request.
   */
  const limitedRequests = (batchId: string, rpm: number): RequestGate =>
    limitedRequestGate(redisRequestLimiter({ redis, key: requestLogKey(batchId), limit: rpm }), (waitMs) =>
      options.onEvent?.({ type: "request_limited", batchId, rpm, waitMs }),
    );

  const runItem = async (job: Job<ItemJobData>, token?: string): Promise<{ recorded: boolean }> => {
    taken++;
    try {
      return await runTaken(job, token);
    } finally {
      taken--;
    }
  };

  const runTaken = async (job: Job<ItemJobData>, token?: string): Promise<{ recorded: boolean }> => {
    const data = itemJobDataSchema.safeParse(job.data);
    if (!data.success) {
      const reason = `job ${job.id} is not an item of a batch: ${describeIssues(data.error)}`;
      options.onEvent?.({ type: "job_refused", jobId: String(job.id), reason });
      throw new UnrecoverableError(reason);
    }
    const { batchId, item, traceparent, base } = data.data;
    // A re-run of an item whose earlier run was recorded (it stalled after recording): done.
    if (await hasResult(redis, batchId, item.id)) return { recorded: false };
    const batch = await batchFor(batchId);
    const claim: Claim = {
      item,
      attempt: await beginExecution(redis, batchId, item.id),
      ...(traceparent === undefined ? {} : { traceparent }),
    };
    // R-R10: names this execution in the batch's runs stream, so a re-run's cost is counted too.
    const run = randomUUID();
    if (batch.kind === "refused") {
      const outcome = { ok: false, error: batch.error } as const;
      const recorded = await recordOutcome(
        redis,
        batchId,
        item.id,
        { status: "failed", error: batch.error },
        run,
      );
      options.onEvent?.({ type: "item_settled", batchId, claim, outcome, recorded });
      throw new UnrecoverableError(`${batch.error.code}: ${batch.error.message}`);
    }
    if (batch.started) await batch.warmed;
    const first = !batch.started;
    batch.started = true;
    // R-B2: an isolated item runs in a worktree of the batch's base — a copy of this worker's pool,
    // at the base whatever ran in it before (a re-run starts clean) and put back to it after the
    // item whatever the outcome: its change travels with its result.
    let workspace: ItemWorkspace | undefined;
    try {
      workspace = await (await copiesFor(batch, base))?.acquire();
    } catch (error) {
      if (first) batch.release(); // the items waiting on this one's warm-up must not wait for ever
      throw error;
    }
    try {
      const isolated = workspace === undefined ? claim : { ...claim, workspace: workspace.dir };
      return await runClaimed({ job, batch, claim: isolated, run, first, workspace }, token);
    } finally {
      if (workspace !== undefined) await (await copiesFor(batch, base))?.giveBack(workspace);
    }
  };

  /**
   * R-B4: where an item's copy comes from — the batch's pool, or for an item of a retry round
   * (its job names another base) a pool at that base. A batch that is not isolated has none.
   */
  const copiesFor = (batch: ReadyBatch, base: string | undefined): Promise<WorkspacePool | undefined> => {
    const { copies } = batch;
    if (copies === undefined || base === undefined || base === batch.batch.isolation?.base)
      return Promise.resolve(copies);
    let pool = batch.rebased.get(base);
    if (pool === undefined) {
      pool = options.isolationFor!(batch.batch, base).then(pooled);
      pool.catch(() => batch.rebased.delete(base));
      batch.rebased.set(base, pool);
    }
    return pool;
  };

  const runClaimed = async (
    taken: {
      readonly job: Job<ItemJobData>;
      readonly batch: ReadyBatch;
      readonly claim: Claim;
      readonly run: string;
      readonly first: boolean;
      readonly workspace: ItemWorkspace | undefined;
    },
    token?: string,
  ): Promise<{ recorded: boolean }> => {
    const { job, batch, claim, run, first, workspace } = taken;
    const batchId = batch.batch.spec.id;
    const { item } = claim;
    const [execution] = batch.executor.startAll([claim], false);
    if (!execution) throw new Error("the executor started no execution");
    if (first) void execution.result.finally(batch.release);
    let outcome = await execution.result.catch(
      (error: unknown): ItemOutcome => ({
        ok: false,
        error: { code: "executor_error", message: error instanceof Error ? error.message : String(error) },
      }),
    );
    let change: string | undefined;
    if (outcome.ok === true && workspace !== undefined) {
      try {
        change = encodeChanges(await workspace.changes());
      } catch (error) {
        const message = `its change could not be read from ${workspace.root}: ${error instanceof Error ? error.message : String(error)}`;
        outcome = { ok: false, error: { code: "isolation_failed", message }, result: outcome.result };
      }
    }
    const hostFailure =
      outcome.ok === false ? options.stopOnFailure?.(outcome.error, batch.batch) : undefined;
    if (hostFailure !== undefined && !stopped) {
      stopped = true;
      // Before the job goes back: this worker must not be the one that takes it again.
      await worker.pause(true);
      options.onEvent?.({ type: "host_failure", batchId, claim, reason: hostFailure });
    }
    if (outcome.ok === "cancelled" || hostFailure !== undefined) {
      // Handed back: the job waits again for any worker, this run not counted as a failure.
      await job.moveToWait(token);
      throw new WaitingError();
    }
    if (outcome.ok === true) {
      const recorded = await recordOutcome(
        redis,
        batchId,
        item.id,
        { status: "succeeded", result: outcome.result },
        run,
        change,
      );
      options.onEvent?.({ type: "item_settled", batchId, claim, outcome, recorded });
      return { recorded };
    }
    const final = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (final) {
      const recorded = await recordOutcome(
        redis,
        batchId,
        item.id,
        {
          status: "failed",
          error: outcome.error,
          ...(outcome.result === undefined ? {} : { result: outcome.result }),
        },
        run,
      );
      options.onEvent?.({ type: "item_settled", batchId, claim, outcome, recorded });
    } else {
      // Not its result, but a run that spent: counted in the report (R-R10).
      if (outcome.result !== undefined) await recordRun(redis, batchId, item.id, run, outcome.result);
      options.onEvent?.({ type: "item_retry", batchId, claim, error: outcome.error });
    }
    // BullMQ retries it after the backoff, or (last attempt) fails it; the parent ignores the failure.
    throw new Error(`${outcome.error.code}: ${outcome.error.message}`);
  };

  const worker = new Worker<ItemJobData>(ITEMS_QUEUE, runItem, {
    connection: redis,
    prefix: QUEUE_PREFIX,
    concurrency: options.concurrency,
    lockDuration: options.lockDurationMs ?? 30_000,
    stalledInterval: options.stalledIntervalMs ?? 30_000,
    maxStalledCount: options.maxStalledCount ?? 3,
  });
  worker.on("error", onRedisError);

  return {
    running: () => taken,
    async close() {
      await worker.close();
      await queue.close();
      // Every item has ended: the pools' idle copies are all there are.
      for (const [pool, isolation] of pools) {
        await pool.drain();
        await isolation.close();
      }
    },
  };
}
