/**
 * An unbounded queue with one async reader: producers `push`, the reader awaits `next()`.
 * `end()` lets the reader drain what is queued and then finish; `fail(error)` makes its next
 * `next()` reject once the queue is drained.
 */
export class AsyncChannel<T> {
  readonly #items: T[] = [];
  #waiter: (() => void) | undefined;
  #ended = false;
  #error: { readonly error: unknown } | undefined;

  push(item: T): void {
    if (this.#ended) return;
    this.#items.push(item);
    this.#wake();
  }

  end(): void {
    this.#ended = true;
    this.#wake();
  }

  fail(error: unknown): void {
    this.#error ??= { error };
    this.end();
  }

  /** The items pushed and not yet read, taken out of the queue. */
  takeQueued(): T[] {
    return this.#items.splice(0);
  }

  get ended(): boolean {
    return this.#ended;
  }

  async next(): Promise<IteratorResult<T, undefined>> {
    while (true) {
      const item = this.#items.shift();
      if (item !== undefined) return { done: false, value: item };
      if (this.#error !== undefined) {
        const { error } = this.#error;
        this.#error = undefined;
        throw error;
      }
      if (this.#ended) return { done: true, value: undefined };
      await new Promise<void>((resolve) => {
        this.#waiter = resolve;
      });
    }
  }

  #wake(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.();
  }
}
