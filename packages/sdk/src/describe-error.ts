import { basename } from "node:path";
import { ForkloopError } from "@forkloop/loop-core/errors";
import { TRANSCRIPT_EXTENSION, type TranscriptDamageData } from "@forkloop/orchestrator";
import { capitalize, errnoFix, errnoReason, isKnownErrno } from "./errno-text.js";
import { OptionsError } from "./options-error.js";

/**
 * R-A7: any error as the user reads it. `code` is what a program (the CLI's exit-code map)
 * branches on; `message` names the problem and the fix — or, for a bug, says so with its stack.
 */
export interface ErrorDescription {
  /** The error's stable code; `file_system` for a disk or permission failure; `internal` for a bug. */
  readonly code: string;
  readonly message: string;
}

/**
 * Codes of errors from packages below the SDK (which cannot use `OptionsError`) that the caller
 * fixes: options it refuses (the tools' WorkspaceError: `--worktree` outside git), an OTEL_*
 * variable forkloop cannot follow (R-V5), a file that is not a transcript, the simulator's fault
 * and batch scripts and scenario files, a scenario with no rule for a request.
 */
const FIXABLE_CODES: ReadonlySet<string> = new Set([
  "invalid_options",
  "invalid_telemetry_config",
  "not_a_transcript",
  "invalid_fault_spec",
  "invalid_batch_script",
  "invalid_scenario",
  "no_matching_rule",
]);

/**
 * Codes of errors that end a query as the user or the run decided, not by a bug: an abort, and an
 * error result (its message carries the result's text, as the Agent SDK's does) — no stack.
 */
const ENDING_CODES: ReadonlySet<string> = new Set(["aborted", "error_result"]);

/**
 * Every expected failure — a problem the caller can fix (an `OptionsError` of any package), a
 * damaged transcript, a full or read-only disk, a file where a directory belongs — becomes its
 * problem and fix (R-R4: never `unexpected error` with a stack). What is left is a real bug.
 */
export function describeError(error: unknown): ErrorDescription {
  if (error instanceof OptionsError || (error instanceof ForkloopError && FIXABLE_CODES.has(error.code)))
    return { code: error.code, message: error.message };
  if (error instanceof ForkloopError && ENDING_CODES.has(error.code))
    return {
      code: error.code,
      message: error.code === "aborted" ? `interrupted: ${error.message}` : error.message,
    };
  if (error instanceof ForkloopError && error.code === "transcript_corrupt")
    return { code: error.code, message: damageNotice(error.data as unknown as TranscriptDamageData) };
  if (error instanceof ForkloopError && error.code === "transcript_write_failed") {
    const path = String(error.data?.path ?? "the transcript");
    const errno = String(error.data?.errno ?? "");
    return {
      code: error.code,
      message: `cannot write ${path}: ${errnoReason(errno)}. What was written before is intact; ${errnoFix(errno)}, then continue with \`forkloop run --resume ${sessionIdOf(path)} "…"\`.`,
    };
  }
  const errno = error as NodeJS.ErrnoException;
  if (typeof errno?.code === "string" && isKnownErrno(errno.code)) {
    const where = errno.path === undefined ? "" : ` ${errno.path}`;
    return {
      code: "file_system",
      message: `cannot ${errno.syscall ?? "access"}${where}: ${errnoReason(errno.code)}. ${capitalize(errnoFix(errno.code))}, then run the command again.`,
    };
  }
  return {
    code: error instanceof ForkloopError ? error.code : "internal",
    message: `unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  };
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
