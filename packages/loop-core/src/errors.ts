/**
 * R-A7: forkloop's error family. Expected failures travel as data (terminal reasons, is_error
 * tool_results); these classes are for the conditions that must unwind a call stack. Every one
 * carries a `code` (a stable word a program can branch on) and optional `data`; each package's
 * own errors extend this base. `@forkloop/loop-core/errors` loads this file alone.
 */
export interface ForkloopErrorOptions {
  readonly code?: string;
  readonly data?: Record<string, unknown> | undefined;
  readonly cause?: unknown;
}

/**
 * The family's brand, a registered symbol: `instanceof ForkloopError` reads it, so an error is of the
 * family wherever its class was defined — in the simulator, which imports no sibling (SPEC §0) and
 * so cannot extend this class, or in a second copy of this module (a bundle beside an installed
 * `@forkloop/loop-core`). A subclass's own `instanceof` stays the prototype check.
 */
const FORKLOOP_ERROR_BRAND: unique symbol = Symbol.for("forkloop.error");

export class ForkloopError extends Error {
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class `instanceof` asked about — a subclass keeps the prototype check
    if (this !== ForkloopError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return (
      value instanceof Error && (value as { [FORKLOOP_ERROR_BRAND]?: unknown })[FORKLOOP_ERROR_BRAND] === true
    );
  }

  override readonly name: string = "ForkloopError";
  /** What went wrong, e.g. `invalid_options`, `transcript_corrupt`; `internal` when not said. */
  readonly code: string;
  readonly data: Record<string, unknown> | undefined;

  constructor(message: string, options: ForkloopErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code ?? "internal";
    this.data = options.data;
  }

  get [FORKLOOP_ERROR_BRAND](): true {
    return true;
  }
}

/**
 * R-L8: the primary model stayed overloaded (529) after the model client's retries. The loop
 * catches it, switches to the next model of the fallback chain and retries the request.
 */
export class FallbackTriggeredError extends ForkloopError {
  override readonly name = "FallbackTriggeredError";
  constructor(
    readonly originalModel: string,
    readonly attempts: number,
  ) {
    super(`Model ${originalModel} stayed overloaded after ${attempts} attempts`, {
      code: "fallback_triggered",
      data: { originalModel, attempts },
    });
  }
}

/**
 * R-R1: the server broke the SSE protocol (an event before `message_start`). The model client
 * treats it like a broken connection: the partial reply is discarded and the request retried.
 */
export class MalformedStreamError extends ForkloopError {
  override readonly name = "MalformedStreamError";
  constructor(message: string) {
    super(message, { code: "malformed_stream" });
  }
}
