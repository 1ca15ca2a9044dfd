import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { Redis } from "ioredis";

/**
 * `--rpm N` (issue 16 item 4): at most N model requests per window (a minute) across every
 * `forkloop worker` on every host. BullMQ's own `limiter` counts jobs, and an item makes many
 * requests (turns, retries, compact forks), so the count is kept here: a sliding log in a sorted
 * set, one member per admitted request, scored by its admission time. The script reads the clock
 * with Redis `TIME`, so hosts with skewed clocks agree on what is in the window; it admits the
 * request or says how long until the oldest one leaves the window. (Redis 7 replicates a script's
 * effects, so a write after `TIME` is allowed.)
 */
const SLIDING_LOG = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local limit = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs - windowMs)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], nowMs, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], windowMs)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + windowMs - nowMs)`;

export const RPM_WINDOW_MS = 60_000;

export interface RequestLimit {
  readonly redis: Redis;
  /** The sorted set every process of the batch shares (`requestLogKey`). */
  readonly key: string;
  /** Requests admitted per window. */
  readonly limit: number;
  /** The window (default a minute: requests per minute). */
  readonly windowMs?: number;
}

/** One attempt: 0 when the request is admitted (and counted), else the ms until one may be. */
export async function tryAdmitRequest(limit: RequestLimit): Promise<number> {
  const waitMs = await limit.redis.eval(
    SLIDING_LOG,
    1,
    limit.key,
    limit.limit,
    limit.windowMs ?? RPM_WINDOW_MS,
    randomUUID(),
  );
  return Number(waitMs);
}

/**
 * Waits until the request is admitted, or returns (admitting nothing) once `signal` aborts.
 * `onWait` hears each refusal with the wait Redis named. A small jitter spreads the waiters of
 * many processes, so they do not all ask again in the same millisecond.
 */
export async function admitRequest(
  limit: RequestLimit,
  signal: AbortSignal,
  onWait?: (waitMs: number) => void,
): Promise<void> {
  while (!signal.aborted) {
    const waitMs = await tryAdmitRequest(limit);
    if (waitMs === 0) return;
    onWait?.(waitMs);
    await delay(waitMs + Math.floor(Math.random() * 50), undefined, { signal }).catch(() => {});
  }
}
