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

export class ForkloopError extends Error {
  override readonly name: string = "ForkloopError";
  /** What went wrong, e.g. `invalid_options`, `transcript_corrupt`; `internal` when not said. */
  readonly code: string;
  readonly data: Record<string, unknown> | undefined;

  constructor(message: string, options: ForkloopErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code ?? "internal";
    this.data = options.data;
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
