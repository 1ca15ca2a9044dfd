import type { CacheSafeParams } from "@forkloop/loop-core";

/**
 * R-F4 for a fan-out. Forks on the parent's model read the parent's own cache
 * entry: its request wrote their whole shared prefix and its response has started, so they go at
 * once. Forks of one turn on *another* model (an agent definition's `model`) share a prefix no
 * request has written yet: like a batch's first wave, the first is sent alone and the others wait
 * until its response has started — a cache entry is readable only then — so they read what it
 * wrote instead of each writing it again. A wave is one turn's CacheSafeParams (the same object)
 * and one model.
 */
export interface FanOutWarmer {
  /** Waits until a fork may start; `started()` must be called once its response has (or it ended). */
  enter(
    params: CacheSafeParams,
    prefixKey: string,
    signal: AbortSignal,
  ): Promise<{ readonly started: () => void }>;
}

export function createFanOutWarmer(): FanOutWarmer {
  const waves = new WeakMap<CacheSafeParams, Map<string, Promise<void>>>();
  return {
    async enter(params, prefixKey, signal) {
      const byModel = waves.get(params) ?? new Map<string, Promise<void>>();
      waves.set(params, byModel);
      const warmed = byModel.get(prefixKey);
      if (warmed !== undefined) {
        await untilAborted(warmed, signal);
        return { started: () => {} };
      }
      let release!: () => void;
      byModel.set(prefixKey, new Promise<void>((resolve) => (release = resolve)));
      return { started: release };
    },
  };
}

/** `promise`, or earlier when `signal` aborts (the caller then sees the abort itself). */
function untilAborted(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    promise.then(done);
  });
}
