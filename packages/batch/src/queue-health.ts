import type { Redis } from "ioredis";
import { BatchError } from "./batch-error.js";

/**
 * R-R10: what the producer and every `forkloop worker` check about their Redis before anything
 * is enqueued or run. BullMQ's own guide: `maxmemory-policy noeviction` is "the only setting that
 * guarantees the correct behavior of the queues" — `allkeys-*` evicts any job or result, and
 * `volatile-*` evicts keys with a TTL, which BullMQ's job locks and rate-limit key are (an
 * evicted lock makes a running item "stalled" and runs it twice). So every policy but
 * noeviction is refused. A replica refuses writes (READONLY). Persistence is a warning: without
 * it a restart loses the batch's queue and the results not yet written by the producer.
 */
export class QueueUnsafeError extends BatchError {
  override readonly name = "QueueUnsafeError";
  constructor(message: string) {
    super("queue_unsafe", message);
  }
}

export interface QueueHealth {
  /** `maxmemory-policy`; undefined when the server does not say. */
  readonly policy: string | undefined;
  /** `aof` (append-only file), `rdb` (snapshots only), `none`, or `unknown` (CONFIG refused). */
  readonly persistence: "aof" | "rdb" | "none" | "unknown";
  readonly replica: boolean;
}

async function readQueueHealth(redis: Redis): Promise<QueueHealth> {
  const info = parseInfo(await redis.info());
  // Managed Redis often refuses CONFIG; INFO persistence still says whether AOF is on.
  const save = await redis
    .call("CONFIG", "GET", "save")
    .then((reply) => (Array.isArray(reply) ? String(reply[1] ?? "") : undefined))
    .catch(() => undefined);
  const persistence =
    info.get("aof_enabled") === "1"
      ? "aof"
      : save === undefined
        ? "unknown"
        : save.trim() === ""
          ? "none"
          : "rdb";
  return {
    policy: info.get("maxmemory_policy"),
    persistence,
    replica: info.get("role") === "slave",
  };
}

/**
 * Refuses an unsafe Redis (`QueueUnsafeError`, a message naming the fix) and returns the warnings
 * to print once (no persistence: what a restart loses).
 */
export async function checkQueueHealth(redis: Redis, url: string): Promise<readonly string[]> {
  const health = await readQueueHealth(redis);
  if (health.replica) {
    throw new QueueUnsafeError(`Redis at ${url} is a read-only replica. Give --queue the primary's URL.`);
  }
  if (health.policy !== undefined && health.policy !== "noeviction") {
    throw new QueueUnsafeError(
      `Redis at ${url} evicts keys when full (maxmemory-policy ${health.policy}): a batch's jobs, locks and results could vanish mid-run. Set it to noeviction: redis-cli -u ${url} CONFIG SET maxmemory-policy noeviction (and maxmemory-policy noeviction in redis.conf).`,
    );
  }
  switch (health.persistence) {
    case "none":
      return [
        `warning: Redis at ${url} keeps nothing on disk (appendonly no, no save points): if it restarts, every queued batch and every result not yet written here is lost. Turn on the append-only file: redis-cli -u ${url} CONFIG SET appendonly yes (and appendonly yes in redis.conf).`,
      ];
    case "rdb":
      return [
        `warning: Redis at ${url} keeps only snapshots (appendonly no): if it restarts, what changed since the last snapshot is lost and those items run again. Turn on the append-only file: redis-cli -u ${url} CONFIG SET appendonly yes.`,
      ];
    case "aof":
    case "unknown":
      return [];
  }
}

function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0 && !line.startsWith("#")) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}
