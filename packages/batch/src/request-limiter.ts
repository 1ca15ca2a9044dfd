import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { RequestGate } from "@forkloop/orchestrator";
import type { Redis } from "ioredis";

/**
 * `--rpm N` (R-B1): at most N model requests in any window (a minute), a sliding log of
 * admission times. One interface, two homes: Redis for a queued batch (every `forkloop worker` on
 * every host shares it), memory for a local batch (one process runs every item).
 */
export interface RequestLimiter {
  /** One attempt: 0 when the request is admitted (and counted), else the ms until one may be. */
  tryAdmit(): Promise<number>;
}

const RPM_WINDOW_MS = 60_000;

/**
 * The local batch's limiter: the Redis script's rule in memory — admissions older than the window
 * drop out; under the limit a request is admitted at once, else it learns when the oldest leaves.
 */
export function memoryRequestLimiter(
  limit: number,
  windowMs = RPM_WINDOW_MS,
  now: () => number = Date.now,
): RequestLimiter {
  const admitted: number[] = []; // admission times, oldest first
  return {
    async tryAdmit() {
      const at = now();
      while (admitted.length > 0 && admitted[0]! <= at - windowMs) admitted.shift();
      if (admitted.length < limit) {
        admitted.push(at);
        return 0;
      }
      return Math.max(1, admitted[0]! + windowMs - at);
    },
  };
}

/** The queued batch's limiter: the sliding log on Redis (`SLIDING_LOG`). */
export function redisRequestLimiter(limit: RequestLimit): RequestLimiter {
  return { tryAdmit: () => tryAdmitRequest(limit) };
}

/**
 * On Redis, the limit holds across every `forkloop worker` on every host. BullMQ's own `limiter` counts jobs, and an item makes many
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

export interface RequestLimit {
  readonly redis: Redis;
  /** The sorted set every process of the batch shares (`requestLogKey`). */
  readonly key: string;
  /** Requests admitted per window. */
  readonly limit: number;
  /** The window (default a minute: requests per minute). */
  readonly windowMs?: number;
}

/** One attempt on Redis: 0 when the request is admitted (and counted), else the ms until one may be. */
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
 * `onWait` hears each refusal with the wait the limiter named. A small jitter spreads the waiters of
 * many processes, so they do not all ask again in the same millisecond.
 */
export async function admitRequest(
  limiter: RequestLimiter,
  signal: AbortSignal,
  onWait?: (waitMs: number) => void,
): Promise<void> {
  while (!signal.aborted) {
    const waitMs = await limiter.tryAdmit();
    if (waitMs === 0) return;
    onWait?.(waitMs);
    await delay(waitMs + Math.floor(Math.random() * 50), undefined, { signal }).catch(() => {});
  }
}

/**
 * The pool's request gate for a limiter. `onLimited` hears when requests start waiting — once per
 * stretch of waiting, not once per request: a wave of items held at the limit is one line.
 */
export function limitedRequestGate(
  limiter: RequestLimiter,
  onLimited: (waitMs: number) => void,
): RequestGate {
  let waiting = 0;
  return async (signal) => {
    let counted = false;
    try {
      await admitRequest(limiter, signal, (waitMs) => {
        if (counted) return;
        counted = true;
        if (waiting++ === 0) onLimited(waitMs);
      });
    } finally {
      if (counted) waiting--;
    }
  };
}
