import { sumUsage, ZERO_USAGE_TOTALS } from "@forkloop/loop-core";
import type { Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { ItemState } from "./job-backend.js";
import type { ProgressSnapshot } from "./progress-display.js";
import { QueueMemory } from "./queue-memory.js";
import {
  batchKeysPresent,
  batchQueueName,
  ITEMS_QUEUE,
  itemIdOfJob,
  QUEUE_PREFIX,
  type QueuedBatch,
  type RunRecord,
  readBatchState,
  readRetryRounds,
  readRuns,
  recordOutcome,
  roundParentId,
} from "./queue-store.js";
import type { QueuedApplier } from "./queued-applies.js";
import { redisOutageReporter } from "./redis-outage.js";

/**
 * The producer side of the BullMQ backend (R-B1): once `forkloop batch --queue URL` has
 * added the batch's flow (queue-ledger.ts), this shows the whole batch's progress (whichever hosts
 * run it) and finishes when the parent job does. The parent runs here: BullMQ starts it once every
 * child has completed or failed, and it records a result for any item BullMQ failed without a
 * worker recording one (an item that stalled too often).
 * `--resume ID --queue URL` calls the same function from any host.
 */
export interface QueuedRunOptions {
  readonly connection: Redis;
  /** Registered and enqueued already (`registerBatch`, then `enqueueOnce` on `openQueueLedger`). */
  readonly batch: QueuedBatch;
  readonly signal?: AbortSignal;
  /** How often the progress is read from Redis (default 1 s). */
  readonly progressMs?: number;
  readonly onEvent?: (event: QueuedRunEvent) => void;
  readonly now?: () => number;
  /**
   * R-B2: an isolated batch's applier — each succeeded item's change is applied to this host's
   * tree before the item is shown settled, and the summary's states are the applied ones.
   */
  readonly applier?: QueuedApplier;
}

export type QueuedRunEvent =
  | { readonly type: "item_settled"; readonly state: ItemState; readonly snapshot: ProgressSnapshot }
  | { readonly type: "progress"; readonly snapshot: ProgressSnapshot }
  /** A worker got a 429: the whole queue waits out its retry-after (R-B1). */
  | { readonly type: "queue_paused"; readonly forMs: number }
  | { readonly type: "redis_error"; readonly message: string }
  /**
   * R-R10: the batch's keys are gone (Redis restarted without persistence, or evicted them): the
   * producer stops instead of waiting for ever, and the results it received are written.
   */
  | { readonly type: "batch_lost" }
  /** R-R10: results Redis had shown are gone again (a restart from an older snapshot): they re-run. */
  | { readonly type: "rolled_back"; readonly items: number };

export interface QueuedRunSummary {
  readonly interrupted: boolean;
  /** R-R10: the batch's keys vanished from Redis; `states` are the results received before. */
  readonly lost: boolean;
  readonly states: readonly ItemState[];
  readonly duplicateExecutions: number;
  /** R-R10: every settled run this producer saw (re-runs and dropped duplicates included). */
  readonly runs: readonly RunRecord[];
  /** Items whose recorded result Redis lost after this producer saw it (a rollback). */
  readonly rolledBackItems: number;
  readonly wallMs: number;
}

export async function runQueuedBatch(options: QueuedRunOptions): Promise<QueuedRunSummary> {
  // R-V2: BullMQ loads when a queued batch runs, not with the package (a local batch never does).
  const { Queue, Worker } = await import("bullmq");
  const now = options.now ?? Date.now;
  const started = now();
  const redis = options.connection;
  const id = options.batch.spec.id;

  const initial = await readBatchState(redis, id);
  const finishedBefore = new Set(initial.states.filter((s) => s.status !== "pending").map((s) => s.item.id));
  const seen = new Set(finishedBefore);
  // R-R10: what this producer has seen, kept here because Redis may lose it (a restart without
  // persistence, a rollback to an older snapshot): every settled state, every run, the most
  // executions counted per item.
  const memory = new QueueMemory(initial.states);
  let runsCursor = "-";
  let lost = false;
  let lostSignal!: () => void;
  const lostBatch = new Promise<void>((resolve) => {
    lostSignal = resolve;
  });
  const onRedisError = redisOutageReporter(redis, (message) =>
    options.onEvent?.({ type: "redis_error", message }),
  );
  const items = new Queue(ITEMS_QUEUE, { connection: redis, prefix: QUEUE_PREFIX });
  items.on("error", onRedisError);
  let pausedForMs = 0;

  const snapshotOf = (states: readonly ItemState[]): ProgressSnapshot => {
    let usage = ZERO_USAGE_TOTALS;
    let costUsd = 0;
    const counts = { succeeded: 0, failed: 0, running: 0 };
    for (const state of states) {
      if (state.result) {
        usage = sumUsage(usage, state.result.usage);
        costUsd += state.result.costUsd;
      }
      if (finishedBefore.has(state.item.id)) continue;
      if (state.status === "succeeded") counts.succeeded++;
      else if (state.status === "failed") counts.failed++;
      else if (state.attempts > 0) counts.running++; // started somewhere, not recorded yet
    }
    return {
      total: states.length,
      skipped: finishedBefore.size,
      ...counts,
      ...usage,
      costUsd,
      elapsedMs: now() - started,
      ...(pausedForMs > 0 ? { pausedForMs } : {}),
    };
  };

  const poll = async () => {
    if (lost) return;
    if (!(await batchKeysPresent(redis, id))) {
      lost = true;
      options.onEvent?.({ type: "batch_lost" });
      lostSignal();
      return;
    }
    const read = await readRuns(redis, id, runsCursor);
    runsCursor = read.last;
    memory.addRuns(read.runs);
    const { states } = await readBatchState(redis, id);
    const rolledBack = memory.observe(states);
    if (rolledBack > 0) options.onEvent?.({ type: "rolled_back", items: rolledBack });
    const wasPaused = pausedForMs > 0;
    pausedForMs = Math.max(0, await items.getRateLimitTtl());
    if (pausedForMs > 0 && !wasPaused) options.onEvent?.({ type: "queue_paused", forMs: pausedForMs });
    const snapshot = snapshotOf(states);
    const fresh = states.filter((state) => state.status !== "pending" && !seen.has(state.item.id));
    const settled = options.applier === undefined ? fresh : await settleAll(options.applier, fresh);
    for (const state of settled) {
      seen.add(state.item.id);
      options.onEvent?.({ type: "item_settled", state, snapshot });
    }
    options.onEvent?.({ type: "progress", snapshot });
  };

  let finish!: () => void;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const parents = new Queue(batchQueueName(id), { connection: redis, prefix: QUEUE_PREFIX });
  parents.on("error", onRedisError);
  // R-B4: each retry round has a parent of its own; the batch is done when every round's is.
  const { round } = await readRetryRounds(redis, id);
  const parentIds = Array.from({ length: round + 1 }, (_, n) => roundParentId(id, n));
  const roundsCompleted = async (except?: string) => {
    for (const parentId of parentIds)
      if (parentId !== except && (await parents.getJobState(parentId)) !== "completed") return false;
    return true;
  };
  const parentWorker = new Worker(
    batchQueueName(id),
    async (job: Job) => {
      // Items BullMQ failed on its own (stalled more than maxStalledCount) have no result yet.
      for (const [key, reason] of Object.entries(await job.getIgnoredChildrenFailures())) {
        const itemId = itemIdOfJob(id, key.slice(key.lastIndexOf(":") + 1));
        if (itemId === undefined) continue;
        await recordOutcome(redis, id, itemId, {
          status: "failed",
          error: { code: "queue_failed", message: reason },
        });
      }
      // This job is still active while it runs: the others decide.
      if (await roundsCompleted(job.id)) finish();
      return { done: true };
    },
    { connection: redis, prefix: QUEUE_PREFIX, concurrency: 1 },
  );
  parentWorker.on("error", onRedisError);
  // The parent may have completed already (a producer that stopped just after it): nothing to wait for.
  if (await roundsCompleted()) finish();

  const aborted = new Promise<void>((resolve) => {
    if (options.signal?.aborted) resolve();
    options.signal?.addEventListener("abort", () => resolve(), { once: true });
  });
  let polling = false;
  const ticker = setInterval(() => {
    if (polling) return;
    polling = true;
    poll()
      .catch(onRedisError)
      .finally(() => {
        polling = false;
      });
  }, options.progressMs ?? 1_000);
  let interrupted = false;
  try {
    await Promise.race([finished, lostBatch, aborted.then(() => (interrupted = true))]);
  } finally {
    clearInterval(ticker);
    await closeParentWorker(parentWorker, interrupted || lost);
    await parents.close();
  }
  if (!interrupted) await poll().catch(() => {}); // the last items' lines
  await items.close();
  if (!lost) {
    const read = await readRuns(redis, id, runsCursor);
    memory.addRuns(read.runs);
  }
  const final = lost ? undefined : await readBatchState(redis, id);
  const merged = memory.merged(final?.states ?? []);
  const { applier } = options;
  // Every result is applied here once, those that settled before this producer started included.
  const states =
    applier === undefined
      ? merged
      : lost
        ? merged.map((state) => applier.known(state))
        : await settleAll(applier, merged);
  return {
    interrupted: interrupted && !lost,
    lost,
    states,
    duplicateExecutions: final?.duplicateExecutions ?? 0,
    runs: memory.runs(),
    rolledBackItems: memory.rolledBack,
    wallMs: now() - started,
  };
}

/**
 * R-B3: the states settled side by side, a slice at a time, so the changes that came in together
 * wait for the same turn of the apply lock and are applied as one group (one plan, one journal
 * record); in the states' order. A slice bounds the changes read from Redis and held at once.
 */
async function settleAll(applier: QueuedApplier, states: readonly ItemState[]): Promise<ItemState[]> {
  const out: ItemState[] = [];
  for (let start = 0; start < states.length; start += SETTLE_SLICE)
    out.push(
      ...(await Promise.all(states.slice(start, start + SETTLE_SLICE).map((state) => applier.settle(state)))),
    );
  return out;
}

const SETTLE_SLICE = 64;

/**
 * Interrupted, a graceful close can wait on a blocking connection that is still reconnecting
 * after a Redis restart, and Ctrl-C must not hang: after a short grace (enough for a parent job
 * being processed to finish, so a re-attach does not wait out its lock) it is no longer awaited
 * and ends in the background (BullMQ cannot force a close once a graceful one began; the CLI
 * exits). The parent's processor only records outcomes atomically, so nothing is lost.
 */
async function closeParentWorker(worker: Worker, interrupted: boolean): Promise<void> {
  const closing = worker.close();
  if (!interrupted) return closing;
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, INTERRUPT_GRACE_MS);
  });
  try {
    await Promise.race([closing.catch(() => {}), grace]);
  } finally {
    clearTimeout(timer);
  }
}

const INTERRUPT_GRACE_MS = 2_000;
