import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BatchLedger,
  type BatchSpec,
  beginExecution,
  connectQueue,
  enqueueOnce,
  ITEMS_QUEUE,
  type ItemRelist,
  type JobItem,
  openLocalJournalBackend,
  openQueueLedger,
  parseQueueUrl,
  QUEUE_PREFIX,
  type QueuedBatch,
  recordOutcome,
  registerBatch,
  sealOf,
} from "@forkloop/batch";
import { itemResult } from "@forkloop/batch/testing";
import { type RedisServer, startRedisServer } from "@forkloop/cli/testing";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-B1: enqueue idempotency and "interrupted on resume" are operations of the backend
 * interface (`BatchLedger`), and `enqueueOnce` runs on them alike for the local journal and for the
 * BullMQ backend on a real redis-server. The same cases run against both.
 */

let redis: RedisServer;
let connection: Awaited<ReturnType<typeof connectQueue>>;
let root: string;

beforeAll(async () => {
  redis = await startRedisServer();
  connection = await connectQueue(parseQueueUrl(redis.url));
  root = await mkdtemp(join(tmpdir(), "forkloop-ledger-"));
});
afterAll(async () => {
  connection?.disconnect();
  await redis?.stop();
  await rm(root, { recursive: true, force: true });
});

const itemsOf = (count: number): JobItem[] =>
  Array.from({ length: count }, (_, index) => ({
    id: `i${index}`,
    label: `items.jsonl:${index + 1}`,
    prompt: `task ${index}`,
  }));

/** A relist that counts how often the batch's source was read again. */
function countingRelist(items: readonly JobItem[], repairCommand?: string): ItemRelist & { calls: number } {
  const relist = {
    calls: 0,
    description: "the test's items",
    list: async () => {
      relist.calls++;
      return items;
    },
    ...(repairCommand === undefined ? {} : { repairCommand }),
  };
  return relist;
}

interface Backend {
  /** A batch of `items` whose enqueueing began but did not finish (a crash before the seal). */
  crashedWhileEnqueueing(id: string, items: readonly JobItem[]): Promise<BatchLedger>;
  /** The ledger as a resume (a second process) opens it. */
  reopen(id: string): Promise<BatchLedger>;
  /** A worker started the item and nothing recorded its end. */
  startWithoutSettling(id: string, itemId: string): Promise<void>;
  /** The item's end is recorded. */
  settle(id: string, itemId: string): Promise<void>;
  /** Items that a worker could take now. */
  runnable(id: string): Promise<number>;
}

function spec(id: string): BatchSpec {
  return {
    id,
    createdAt: new Date(0).toISOString(),
    cwd: root,
    source: { kind: "items", path: "items.jsonl" },
    prompt: "{{item}}",
    model: "claude-sonnet-4-6",
    maxTurns: 4,
    allowedTools: [],
    disallowedTools: [],
    permissionMode: "dontAsk",
    fallbackModels: [],
    outputDir: join(root, id),
  };
}

const local: Backend = {
  async crashedWhileEnqueueing(id, items) {
    const backend = await openLocalJournalBackend({ dir: await dirOf(id) });
    await backend.enqueue(items.slice(0, 2)); // two durable enqueue records, then the crash
    await backend.close();
    return this.reopen(id);
  },
  reopen: async (id) => openLocalJournalBackend({ dir: await dirOf(id) }),
  async startWithoutSettling(id) {
    const backend = await openLocalJournalBackend({ dir: await dirOf(id) });
    await backend.claim("w1");
    await backend.close(); // the process ended mid-item
  },
  async settle(id, itemId) {
    const backend = await openLocalJournalBackend({ dir: await dirOf(id) });
    const claim = await backend.claim("w2"); // the interrupted item is redone first
    expect(claim?.item.id).toBe(itemId);
    expect(await backend.complete(claim!, resultOk)).toEqual({ ok: true });
    await backend.close();
  },
  async runnable(id) {
    const backend = await openLocalJournalBackend({ dir: await dirOf(id) });
    const states = await backend.list();
    await backend.close();
    return states.filter((state) => state.status === "pending").length;
  },
};

async function dirOf(id: string): Promise<string> {
  const dir = join(root, "local", id);
  await mkdir(dir, { recursive: true });
  return dir;
}

const queued = (id: string): QueuedBatch => ({ spec: spec(id), attempts: 1, backoffMs: 10 });

const bullmq: Backend = {
  async crashedWhileEnqueueing(id, items) {
    // The producer registered the batch (settings and items in Redis) and died before adding its flow.
    expect((await registerBatch(connection, queued(id), items)).kind).toBe("created");
    return this.reopen(id);
  },
  reopen: async (id) => openQueueLedger(connection, queued(id), redis.url),
  async startWithoutSettling(id, itemId) {
    await beginExecution(connection, id, itemId);
  },
  async settle(id, itemId) {
    await recordOutcome(connection, id, itemId, { status: "succeeded", result: resultOk });
  },
  async runnable(id) {
    const queue = new Queue(ITEMS_QUEUE, { connection, prefix: QUEUE_PREFIX });
    try {
      const jobs = await queue.getJobs(["waiting", "prioritized"]);
      return jobs.filter((job) => job.data.batchId === id).length;
    } finally {
      await queue.close();
    }
  },
};

const resultOk = itemResult("ok");

const notice = () => {};

describe.each([
  ["local journal", local],
  ["BullMQ on redis-server", bullmq],
] as const)("R-B1: the %s as a BatchLedger", (name, backend) => {
  const id = (what: string) => `${what}-${name.split(" ")[0]!.toLowerCase()}`;

  it("a crash before the enqueue seal: the resume lists the items again and enqueues them all, once", async () => {
    const items = itemsOf(4);
    const ledger = await backend.crashedWhileEnqueueing(id("crash"), items);
    expect(await ledger.enqueueSeal()).toBeUndefined();
    const relist = countingRelist(items);
    await enqueueOnce(ledger, undefined, { relist, repair: false, notice });
    expect(relist.calls).toBe(1);
    expect(await ledger.enqueueSeal()).toEqual(sealOf(items.map((item) => item.id)));
    await ledger.close();
    expect(await backend.runnable(id("crash"))).toBe(4);

    // Sealed now: a second resume neither lists the source nor enqueues anything again.
    const again = await backend.reopen(id("crash"));
    const second = countingRelist(items);
    await enqueueOnce(again, undefined, { relist: second, repair: false, notice });
    await again.close();
    expect(second.calls).toBe(0);
    expect(await backend.runnable(id("crash"))).toBe(4);
  });

  it("a seal that names more items than the backend holds stops the resume with the repair command", async () => {
    const items = itemsOf(3);
    const ledger = await backend.crashedWhileEnqueueing(id("lost"), items);
    await ledger.sealEnqueue(sealOf(Array.from({ length: 9 }, (_, index) => `x${index}`)));
    const relist = countingRelist(items, "forkloop batch --resume lost --repair");
    const resumed = enqueueOnce(ledger, undefined, { relist, repair: false, notice });
    await expect(resumed).rejects.toThrow(ledger.location);
    await expect(resumed).rejects.toThrow(/says 9 were enqueued: it lost records.*--resume lost --repair/);
    expect(relist.calls).toBe(0);
    await ledger.close();
  });

  it("interrupted on resume: an item started and never settled is listed, and not once it settles", async () => {
    const items = itemsOf(2);
    const first = await backend.crashedWhileEnqueueing(id("intr"), items);
    await enqueueOnce(first, undefined, { relist: countingRelist(items), repair: false, notice });
    expect(await first.interrupted()).toEqual([]);
    await first.close();
    await backend.startWithoutSettling(id("intr"), "i0");
    const resumed = await backend.reopen(id("intr"));
    expect(await resumed.interrupted()).toEqual(["i0"]);
    await resumed.close();
    await backend.settle(id("intr"), "i0");
    const settled = await backend.reopen(id("intr"));
    expect(await settled.interrupted()).toEqual([]);
    await settled.close();
  });
});
