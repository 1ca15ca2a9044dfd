import type { AttemptTimeout } from "./model-failure.js";

/**
 * R-R2 + R-R11: the deadlines of one model request attempt — response headers, then the gap
 * between stream events (one re-armable timer), and the attempt's overall deadline (armed once:
 * a server that drips one event inside the idle timeout would otherwise never end). When one
 * fires it aborts the attempt's controller and remembers which ran out, so the model client
 * retries instead of hanging (pings do not re-arm the idle timer: the SDK never yields them).
 */
export class AttemptDeadline {
  #timer: NodeJS.Timeout | undefined;
  #overall: NodeJS.Timeout | undefined;
  #fired: { readonly timeout: AttemptTimeout; readonly ms: number } | undefined;

  constructor(private readonly controller: AbortController) {}

  /** Which deadline ran out, if one did. */
  get fired(): { readonly timeout: AttemptTimeout; readonly ms: number } | undefined {
    return this.#fired;
  }

  /** (Re)starts the phase timer; a non-finite or non-positive `ms` means no deadline. */
  arm(timeout: Exclude<AttemptTimeout, "attempt_timeout">, ms: number): void {
    this.disarm();
    this.#timer = this.#start(timeout, ms);
  }

  /** R-R11: starts the overall deadline, which no event re-arms; `dispose` ends it. */
  armOverall(ms: number): void {
    if (this.#overall !== undefined) clearTimeout(this.#overall);
    this.#overall = this.#start("attempt_timeout", ms);
  }

  /** Stops the phase timer (the overall deadline keeps running). */
  disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Stops every timer: the attempt is over. */
  dispose(): void {
    this.disarm();
    if (this.#overall !== undefined) clearTimeout(this.#overall);
    this.#overall = undefined;
  }

  #start(timeout: AttemptTimeout, ms: number): NodeJS.Timeout | undefined {
    if (!Number.isFinite(ms) || ms <= 0) return undefined;
    return setTimeout(() => {
      if (this.#fired !== undefined) return;
      this.#fired = { timeout, ms };
      this.controller.abort(new Error(`${timeout} after ${ms} ms`));
    }, ms);
  }
}
