import { ForkloopError, type ForkloopErrorOptions } from "@forkloop/loop-core/errors";

/**
 * A problem the caller can fix: a bad settings file, environment variable, models file or
 * option. The message names the problem and the fix (no stack trace needed); the CLI prints it
 * and exits 2.
 */
export class OptionsError extends ForkloopError {
  override readonly name: string = "OptionsError";
  constructor(message: string, options: ForkloopErrorOptions = {}) {
    super(message, { code: "invalid_options", ...options });
  }
}
