import { basename } from "node:path";
import { OrchestratorError, TRANSCRIPT_EXTENSION, type TranscriptDamageData } from "@forkloop/orchestrator";
import { capitalize, errnoFix, errnoReason, isKnownErrno } from "@forkloop/sdk/errors";
import { CliError } from "./cli-error.js";

/**
 * Every expected failure of forkloop's state — a damaged transcript or journal, a full
 * or read-only disk, a path that is a file where a directory belongs — becomes a message that
 * names the path and the fix (exit 2), never `unexpected error` with a stack trace. `main`
 * passes every error it did not expect through here; what is left is a real bug.
 */
export function asStateError(error: unknown): CliError | undefined {
  if (error instanceof CliError) return error;
  if (error instanceof OrchestratorError) {
    if (error.code === "transcript_corrupt") return damagedTranscript(error);
    if (error.code === "transcript_write_failed") {
      const path = String(error.data?.path ?? "the transcript");
      return new CliError(
        `cannot write ${path}: ${errnoReason(String(error.data?.errno ?? ""))}. What was written before is intact; ${errnoFix(String(error.data?.errno ?? ""))}, then continue with \`forkloop run --resume ${sessionIdOf(path)} "…"\`.`,
      );
    }
    return undefined;
  }
  const errno = error as NodeJS.ErrnoException;
  if (typeof errno?.code === "string" && isKnownErrno(errno.code)) {
    const where = errno.path === undefined ? "" : ` ${errno.path}`;
    return new CliError(
      `cannot ${errno.syscall ?? "access"}${where}: ${errnoReason(errno.code)}. ${capitalize(errnoFix(errno.code))}, then run the command again.`,
    );
  }
  return undefined;
}

function damagedTranscript(error: OrchestratorError): CliError {
  return new CliError(damageNotice(error.data as unknown as TranscriptDamageData));
}

/** Where a transcript is damaged, what is intact, and the fix (for run, replay and sessions). */
export function damageNotice(damage: TranscriptDamageData): string {
  const id = sessionIdOf(damage.path);
  return `${damage.path} is damaged at byte ${damage.offset} of ${damage.fileBytes}: the ${damage.intactRecords} records before it are intact (${damage.laterRecords} readable records follow it); the file was not changed. Continue from the intact part with \`forkloop run --resume ${id} --repair "…"\` (the damaged file is kept beside it as ${basename(damage.path)}.damaged-<time>).`;
}

function sessionIdOf(path: string): string {
  const name = basename(path);
  return name.endsWith(TRANSCRIPT_EXTENSION) ? name.slice(0, -TRANSCRIPT_EXTENSION.length) : name;
}
