import type { Redis } from "ioredis";
import type { BatchLedger, EnqueueSeal, ItemState, JobItem } from "./job-backend.js";
import {
  batchQueueName,
  ITEMS_QUEUE,
  itemJobId,
  QUEUE_PREFIX,
  type QueuedBatch,
  readBatchState,
  readEnqueueSeal,
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
    async enqueue(items: readonly JobItem[]) {
      // R-V2: BullMQ loads when a queued batch first needs it, not with the package.
      const { FlowProducer } = await import("bullmq");
      const flows = new FlowProducer({ connection: redis, prefix: QUEUE_PREFIX });
      flows.on("error", () => {}); // the add below rejects with it
      try {
        await flows.add({
          name: "batch",
          queueName: batchQueueName(id),
          data: { batchId: id },
          opts: { jobId: id },
          children: items.map((item) => ({
            name: "item",
            queueName: ITEMS_QUEUE,
            data: { batchId: id, item, ...(traceparent === undefined ? {} : { traceparent }) },
            opts: {
              jobId: itemJobId(id, item.id),
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
    },
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
