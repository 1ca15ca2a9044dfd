import { OptionsError } from "@forkloop/sdk/errors";
import { type ExitCode, exitCodeForError } from "./exit-codes.js";

/**
 * An error the user can fix (bad flag, bad setting, unknown batch id), code `usage`. `main`
 * prints the message and exits 2 with no stack trace: the message must name the problem and the
 * fix.
 */
export class CliError extends OptionsError {
  override readonly name = "CliError";

  constructor(message: string) {
    super(message, { code: "usage" });
  }

  /** The exit code, from the one table (EXIT_FOR_ERROR_CODE). */
  get exitCode(): ExitCode {
    return exitCodeForError(this.code);
  }
}
