import type { Redis } from "ioredis";
import type { BatchLedger, EnqueueSeal, ItemState, JobItem } from "./job-backend.js";
import {
  batchQueueName,
  beginRetryRound,
  ITEMS_QUEUE,
  itemJobId,
  QUEUE_PREFIX,
  type QueuedBatch,
  readBatchState,
  readEnqueueSeal,
  readRetryRounds,
  retryJobId,
  roundParentId,
  sealRetryRound,
  writeEnqueueSeal,
} from "./queue-store.js";

/**
 * The BullMQ backend's ledger (R-B1): the same producer operations as the local
 * journal's, on Redis. Enqueueing adds the batch as one flow — a parent job in the batch's own
 * queue and one child per item in the shared items queue, all with deterministic ids, so adding
 * it again is a no-op — and the seal says the add finished, so a producer that crashed between
 * registering the batch and adding its flow is seen on re-attach. The batch's settings and items
 * are registered before (queue-store.ts `registerBatch`); claiming is BullMQ's Worker's.
 */
export function openQueueLedger(
  redis: Redis,
  batch: QueuedBatch,
  url: string,
  /** R-V5: the batch span's trace context, carried in every item's job data to the workers. */
  traceparent?: string,
): BatchLedger {
  const id = batch.spec.id;
  return {
    location: `batch ${id} on ${url}`,
    enqueue: (items: readonly JobItem[]) =>
      addFlow(
        redis,
        batch,
        id,
        items.map((item) => ({ item, jobId: itemJobId(id, item.id) })),
        traceparent,
      ),
    enqueueSeal: () => readEnqueueSeal(redis, id),
    sealEnqueue: (seal: EnqueueSeal) => writeEnqueueSeal(redis, id, seal),
    /** Started somewhere and not recorded: running on a worker, or re-run once its lock expires. */
    async interrupted() {
      const { states } = await readBatchState(redis, id);
      return states.filter((state) => state.status === "pending" && state.attempts > 0).map((s) => s.item.id);
    },
    async list(): Promise<readonly ItemState[]> {
      return (await readBatchState(redis, id)).states;
    },
    async close() {}, // the connection is the caller's
  };
}

/**
 * Adds one round of the batch as a flow: a parent job `parentId` in the batch's own queue and a
 * child per item in the shared items queue, every id deterministic, so adding it again is a no-op.
 */
async function addFlow(
  redis: Redis,
  batch: QueuedBatch,
  parentId: string,
  children: readonly { readonly item: JobItem; readonly jobId: string }[],
  traceparent: string | undefined,
  base?: string,
): Promise<void> {
  const id = batch.spec.id;
  // R-V2: BullMQ loads when a queued batch first needs it, not with the package.
  const { FlowProducer } = await import("bullmq");
  const flows = new FlowProducer({ connection: redis, prefix: QUEUE_PREFIX });
  flows.on("error", () => {}); // the add below rejects with it
  try {
    await flows.add({
      name: "batch",
      queueName: batchQueueName(id),
      data: { batchId: id },
      opts: { jobId: parentId },
      children: children.map(({ item, jobId }) => ({
        name: "item",
        queueName: ITEMS_QUEUE,
        data: {
          batchId: id,
          item,
          ...(traceparent === undefined ? {} : { traceparent }),
          ...(base === undefined ? {} : { base }),
        },
        opts: {
          jobId,
          attempts: batch.attempts,
          backoff: { type: "exponential", delay: batch.backoffMs },
          // A failed item is a result like any other: the parent still runs when all are done.
          ignoreDependencyOnFailure: true,
        },
      })),
    });
  } finally {
    await flows.close();
  }
}

/** R-B4: a retry round as the producer's journal names it (queued-applies.ts). */
export interface RetryRound {
  readonly round: number;
  /** The commit its items start from: the producer's tree when the round began. */
  readonly base: string;
  readonly items: readonly JobItem[];
}

/**
 * R-B4 `--retry-conflicts` on the queue: puts a round's items back — their earlier results taken
 * back and a job each in a flow of the round's own, carrying the round's base — exactly once
 * whichever producer gets here first (both steps check Redis's record of the rounds, so a
 * producer killed half-way through is finished by the next one to attach).
 */
export async function enqueueRetryRound(
  redis: Redis,
  batch: QueuedBatch,
  round: RetryRound,
  traceparent?: string,
): Promise<void> {
  const id = batch.spec.id;
  await beginRetryRound(
    redis,
    id,
    round.round,
    round.items.map((item) => item.id),
  );
  if ((await readRetryRounds(redis, id)).enqueued >= round.round) return;
  const children = round.items.map((item) => ({ item, jobId: retryJobId(id, item.id, round.round) }));
  await addFlow(redis, batch, roundParentId(id, round.round), children, traceparent, round.base);
  await sealRetryRound(redis, id, round.round);
}
