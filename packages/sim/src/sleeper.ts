/** Timers the server can cancel all at once on close, so no test waits on a pending delay. */
export class Sleeper {
  readonly #pending = new Map<NodeJS.Timeout, () => void>();

  /** Resolves after `ms` (immediately when `ms` ≤ 0), or as soon as `cancelAll` runs. */
  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#pending.delete(timer);
        resolve();
      }, ms);
      this.#pending.set(timer, resolve);
    });
  }

  cancelAll(): void {
    for (const [timer, resolve] of this.#pending) {
      clearTimeout(timer);
      resolve();
    }
    this.#pending.clear();
  }
}
