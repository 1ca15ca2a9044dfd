import type { AttemptTimeout } from "./model-failure.js";

/**
 * Issue 11: the two deadlines of one model request attempt — response headers, then the gap
 * between stream events — as one re-armable timer. When it fires it aborts the attempt's
 * controller and remembers which deadline ran out, so the model client retries instead of
 * hanging on a server that sent headers and then nothing (or pings forever; the SDK never
 * yields pings, so they do not re-arm it).
 */
export class AttemptDeadline {
  #timer: NodeJS.Timeout | undefined;
  #fired: { readonly timeout: AttemptTimeout; readonly ms: number } | undefined;

  constructor(private readonly controller: AbortController) {}

  /** Which deadline ran out, if one did. */
  get fired(): { readonly timeout: AttemptTimeout; readonly ms: number } | undefined {
    return this.#fired;
  }

  /** (Re)starts the timer; a non-finite or non-positive `ms` means no deadline. */
  arm(timeout: AttemptTimeout, ms: number): void {
    this.disarm();
    if (!Number.isFinite(ms) || ms <= 0) return;
    this.#timer = setTimeout(() => {
      this.#fired = { timeout, ms };
      this.controller.abort(new Error(`${timeout} after ${ms} ms`));
    }, ms);
  }

  disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
