import { ForkloopError } from "@forkloop/loop-core/errors";
import { EXIT, type ExitCode } from "./exit-codes.js";

/**
 * An error the user can fix (bad flag, bad setting, unknown batch id). `main` prints the message
 * and exits with `exitCode` (2 by default) and no stack trace: the message must name the problem
 * and the fix.
 */
export class CliError extends ForkloopError {
  override readonly name = "CliError";
  readonly exitCode: ExitCode;

  constructor(message: string, exitCode: ExitCode = EXIT.usage) {
    super(message, { code: "usage" });
    this.exitCode = exitCode;
  }
}
