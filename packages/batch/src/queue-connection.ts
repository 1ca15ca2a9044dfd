import { OptionsError } from "@forkloop/sdk/errors";
import type { Redis, RedisOptions } from "ioredis";
import { BatchError } from "./batch-error.js";
import { checkQueueHealth } from "./queue-health.js";
import { describeRedisError, isRedisError } from "./redis-errors.js";

/**
 * `--queue redis://HOST:PORT[/DB]` (R-B1): where the BullMQ backend's Redis is. A bad
 * URL is an options error (exit 2) that shows the expected shape; an unreachable Redis is an
 * error naming the URL, raised before anything is enqueued or run.
 */
export interface QueueAddress {
  /** The URL as the user gave it, without a password (for messages). */
  readonly display: string;
  readonly options: LegacyOptions;
}

/** ioredis's options with its default (legacy) reply mapping, which BullMQ expects. */
type LegacyOptions = Omit<RedisOptions, "replyMapping">;

const SHAPE = "redis://HOST:PORT[/DB], e.g. --queue redis://127.0.0.1:6379/0";

export function parseQueueUrl(text: string): QueueAddress {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OptionsError(`--queue "${text}" is not a URL; give ${SHAPE}.`);
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new OptionsError(`--queue "${text}" is not a Redis URL (${url.protocol}); give ${SHAPE}.`);
  }
  if (url.hostname === "") throw new OptionsError(`--queue "${text}" has no host; give ${SHAPE}.`);
  const port = url.port === "" ? 6379 : Number(url.port);
  const dbText = url.pathname.replace(/^\//, "");
  if (dbText !== "" && !/^\d{1,2}$/.test(dbText)) {
    throw new OptionsError(
      `--queue "${text}": the database "${dbText}" is not a number 0–15; give ${SHAPE}.`,
    );
  }
  if (url.search !== "" || url.hash !== "") {
    throw new OptionsError(
      `--queue "${text}" has a query or fragment forkloop does not read; give ${SHAPE}.`,
    );
  }
  const display = `${url.protocol}//${url.hostname}:${port}${dbText === "" ? "" : `/${dbText}`}`;
  return {
    display,
    options: {
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port,
      db: dbText === "" ? 0 : Number(dbText),
      ...(url.username === "" ? {} : { username: decodeURIComponent(url.username) }),
      ...(url.password === "" ? {} : { password: decodeURIComponent(url.password) }),
      ...(url.protocol === "rediss:" ? { tls: {} } : {}),
    },
  };
}

/** Redis is down or refuses us: not a flag error, but one the user fixes (start it, fix the URL). */
export class QueueUnreachableError extends BatchError {
  override readonly name = "QueueUnreachableError";
  constructor(message: string) {
    super("queue_unreachable", message);
  }
}

/**
 * A connection for BullMQ workers and our own commands: `maxRetriesPerRequest: null` so a Redis
 * restart mid-batch makes commands wait for the reconnect instead of failing (and losing a
 * result); BullMQ requires it for workers. Checked with a PING before it is handed out.
 */
export async function connectQueue(address: QueueAddress, timeoutMs = 3_000): Promise<Redis> {
  const probeOptions: LegacyOptions = {
    ...address.options,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  };
  // R-V2: ioredis loads when a queued batch connects, not with the package (a local batch never does).
  const { Redis: RedisClient } = await import("ioredis");
  const probe = new RedisClient(probeOptions);
  // Reported through connect()'s rejection below; ioredis's ready check can fail with the real
  // reason (NOAUTH) as an "error" event and then reject with only "Connection is closed".
  let reason: unknown;
  probe.on("error", (error: unknown) => {
    reason ??= error;
  });
  try {
    await probe.connect();
    await probe.ping();
  } catch (rejection) {
    const error = isRedisError(reason) ? reason : rejection;
    probe.disconnect();
    // R-R10: NOAUTH, a refused connection… each named with its fix.
    throw new QueueUnreachableError(
      isRedisError(error)
        ? describeRedisError(error, address.display, {
            passwordGiven: address.options.password !== undefined,
          })
        : `cannot reach Redis at ${address.display} (${(error as Error).message}). Start it (redis-server, see the @forkloop/batch README) or fix --queue.`,
    );
  }
  probe.disconnect();
  const options: LegacyOptions = { ...address.options, maxRetriesPerRequest: null };
  const connection = new RedisClient(options);
  connection.on("error", () => {}); // ioredis reconnects by itself; callers watch their commands
  return connection;
}

/**
 * R-R10: `connectQueue`, then the checks every producer and worker makes before it enqueues or
 * runs anything (queue-health.ts): an evicting or read-only Redis is refused
 * (`QueueUnsafeError`), a Redis that keeps nothing on disk is warned about through `notice`.
 */
export async function openQueue(address: QueueAddress, notice: (line: string) => void): Promise<Redis> {
  const connection = await connectQueue(address);
  try {
    for (const warning of await checkQueueHealth(connection, address.display)) notice(warning);
  } catch (error) {
    connection.disconnect();
    throw error;
  }
  return connection;
}
