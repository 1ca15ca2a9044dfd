/**
 * The brand of forkloop's error family (R-A7), the registered symbol `@forkloop/loop-core/errors`
 * reads in `instanceof ForkloopError`. The simulator imports no sibling package (SPEC §0), so its
 * errors join the family by the brand instead of by extending ForkloopError.
 */
const FORKLOOP_ERROR_BRAND: unique symbol = Symbol.for("forkloop.error");

/**
 * R-A7: the simulator's errors, each a ForkloopError to forkloop (`instanceof`, `code`, `data`):
 * `describeError` gives the CLI and a program the same message for them.
 */
export class SimError extends Error {
  override readonly name: string = "SimError";
  /** A stable word a program can branch on, e.g. `invalid_scenario`. */
  readonly code: string;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: string, message: string, data?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.data = data;
  }

  get [FORKLOOP_ERROR_BRAND](): true {
    return true;
  }
}
