/**
 * One `abort` listener per signal, shared by everything waiting on it. A turn's signal is waited
 * on by each of its running tool calls and each sub-agent they start: 8 parallel Agent calls
 * already add more than Node's default of 10 listeners, and Node warns of a leak
 * (MaxListenersExceededWarning) where there is none. Here the signal holds a single listener
 * while anyone waits, which fans out to the waiters, and none once the last has gone (R-T2, R-L16).
 */
interface Waiters {
  readonly callbacks: Set<() => void>;
  readonly unlisten: () => void;
}

const waitersOf = new WeakMap<AbortSignal, Waiters>();

/**
 * Calls `callback` once when `signal` aborts (at once if it already has); the returned function
 * stops waiting. Callbacks run in the order they were added.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback();
    return () => {};
  }
  const waiters = waitersOf.get(signal) ?? listen(signal);
  // A wrapper, so the same function added twice is two waiters, as with addEventListener calls
  // of distinct listeners.
  const waiter = (): void => callback();
  waiters.callbacks.add(waiter);
  return () => {
    if (!waiters.callbacks.delete(waiter) || waiters.callbacks.size > 0) return;
    // The listener leaves with the last waiter, so a signal that lives for a whole session does
    // not keep one per turn.
    waiters.unlisten();
  };
}

function listen(signal: AbortSignal): Waiters {
  const callbacks = new Set<() => void>();
  const fire = (): void => {
    waitersOf.delete(signal);
    const errors: unknown[] = [];
    for (const callback of [...callbacks]) {
      try {
        callback();
      } catch (error) {
        errors.push(error);
      }
    }
    callbacks.clear();
    if (errors.length > 0) throw errors[0];
  };
  const waiters: Waiters = {
    callbacks,
    unlisten: () => {
      if (waitersOf.get(signal) === waiters) waitersOf.delete(signal);
      signal.removeEventListener("abort", fire);
    },
  };
  waitersOf.set(signal, waiters);
  signal.addEventListener("abort", fire, { once: true });
  return waiters;
}
