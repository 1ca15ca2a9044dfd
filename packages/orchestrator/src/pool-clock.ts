import { type RetryClock, SYSTEM_CLOCK } from "@forkloop/loop-core";
import { raiseTo } from "./worker-protocol.js";

/**
 * R-R11: the clock a pool's waits run on — a rate limit's far reset, the pool-wide 429 pause, a
 * backoff step — shared by the parent and every worker thread. Without one, the system clock.
 * `skipAheadClock()` (tests) makes each wait return at once and move the shared time on to its
 * end, so a batch waits out a `retry-after: 3600` in every thread alike, without waiting an hour.
 */
export interface SharedClock {
  /** A BigInt64: milliseconds this clock is ahead of the system clock. */
  readonly buffer: SharedArrayBuffer;
}

export function skipAheadClock(): SharedClock {
  return { buffer: new SharedArrayBuffer(8) };
}

/** How far a skip-ahead clock has moved past the system clock (ms): the time its waits skipped. */
export function skippedMs(clock: SharedClock): number {
  return Number(Atomics.load(new BigInt64Array(clock.buffer), 0));
}

/** The clock to wait on: the system clock, or the shared skip-ahead one. */
export function poolClock(clock: SharedClock | undefined): RetryClock {
  if (clock === undefined) return SYSTEM_CLOCK;
  const ahead = new BigInt64Array(clock.buffer);
  const now = () => Date.now() + Number(Atomics.load(ahead, 0));
  return {
    now,
    async sleep(ms, signal) {
      if (signal.aborted) return false;
      // Never back: two waits that end apart keep the later end.
      raiseTo(ahead, Math.ceil(now() + ms - Date.now()));
      // A turn of the event loop, as a real wait has: what else runs here gets to run.
      await new Promise((resolve) => setImmediate(resolve));
      return !signal.aborted;
    },
  };
}
