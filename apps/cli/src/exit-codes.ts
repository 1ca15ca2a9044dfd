import { type BatchStatus, finishedBatchStatus } from "@forkloop/batch/internal";
import type { TerminalReason } from "@forkloop/loop-core";

/**
 * Process exit codes of every `forkloop` command (documented in apps/cli/README.md).
 * Scripts branch on these, so they are stable: never renumber, only add.
 */
export const EXIT = {
  /** The run completed / every batch item succeeded. */
  ok: 0,
  /** An unexpected fault (a bug or infrastructure failure), reported on stderr. */
  internal: 1,
  /** Bad flags, settings or input: the message names the problem and the fix. */
  usage: 2,
  /** `run` hit `--max-turns` (R-L19). */
  maxTurns: 3,
  /** The model or the API failed for good (`model_error`, `image_error`). */
  modelError: 4,
  /** A hook stopped the run (`hook_stopped`, `stop_hook_prevented`). */
  hookStopped: 5,
  /** `batch`: some items succeeded and some failed. */
  batchPartial: 6,
  /** `batch`: no item succeeded. */
  batchFailed: 7,
  /** The context could not be brought under the model's window (`prompt_too_long`, `blocking_limit`). */
  contextLimit: 8,
  /** `--max-budget-usd`: `run` stopped at the budget; `batch` left items unstarted (resume with a higher one). */
  budgetReached: 10,
  /** Stopped by SIGHUP (the terminal closed, ssh dropped): 128 + SIGHUP; state is consistent as after Ctrl+C (R-R8). */
  hangup: 129,
  /** Interrupted (Ctrl+C, `aborted_streaming`, `aborted_tools`): 128 + SIGINT, like a shell. */
  interrupted: 130,
  /** Stopped by SIGQUIT (Ctrl+\ in a terminal, a supervisor's quit): 128 + SIGQUIT; as cleanly as SIGTERM, no core dump (R-R8). */
  quit: 131,
  /** stdout's reader went away (`forkloop run … | head -1`): 128 + SIGPIPE; the work stopped quietly. */
  brokenPipe: 141,
  /** Stopped by SIGTERM (`timeout`, `kill`, a CI runner): 128 + SIGTERM; state is consistent as after Ctrl+C. */
  terminated: 143,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** `forkloop run`'s exit code follows the loop's terminal reason (R-L6). */
export function exitCodeForTerminal(reason: TerminalReason): ExitCode {
  switch (reason) {
    case "completed":
      return EXIT.ok;
    case "max_turns":
      return EXIT.maxTurns;
    case "model_error":
    case "image_error":
      return EXIT.modelError;
    case "hook_stopped":
    case "stop_hook_prevented":
      return EXIT.hookStopped;
    case "prompt_too_long":
    case "blocking_limit":
      return EXIT.contextLimit;
    case "aborted_streaming":
    case "aborted_tools":
      return EXIT.interrupted;
    default: {
      const unreachable: never = reason;
      throw new Error(`unknown terminal reason ${String(unreachable)}`);
    }
  }
}

/** `forkloop batch`: 0 only when every item succeeded. */
export function exitCodeForBatch(counts: { succeeded: number; failed: number; pending: number }): ExitCode {
  return EXIT_FOR_BATCH_STATUS[finishedBatchStatus(counts)];
}

/** `forkloop batch`'s exit code by how the batch ended (`describeLocalOutcome`, `describeQueuedOutcome`). */
export const EXIT_FOR_BATCH_STATUS: Readonly<Record<BatchStatus, ExitCode>> = {
  succeeded: EXIT.ok,
  partial: EXIT.batchPartial,
  failed: EXIT.batchFailed,
  stopped: EXIT.usage,
  interrupted: EXIT.interrupted,
  budget_reached: EXIT.budgetReached,
};

/**
 * R-A7: the exit code of a failure, by its code (`describeError(error).code`) — the one table the
 * CLI exits by. Every failure the user fixes (bad input, a directory or disk, damaged state, an
 * unreachable or unsafe queue) is 2, naming the problem and the fix; a code not listed is a bug (1).
 */
export const EXIT_FOR_ERROR_CODE: Readonly<Record<string, ExitCode>> = {
  /** A bad flag or argument (CliError). */
  usage: EXIT.usage,
  /** A bad settings file, environment variable, models file, option or held lock (OptionsError). */
  invalid_options: EXIT.usage,
  /** A file given as a transcript that holds no session (@forkloop/report). */
  not_a_transcript: EXIT.usage,
  /** The simulator's `--faults`, `--batch-script` or scenario file is not valid, or no rule matched (@forkloop/sim). */
  invalid_fault_spec: EXIT.usage,
  invalid_batch_script: EXIT.usage,
  invalid_scenario: EXIT.usage,
  no_matching_rule: EXIT.usage,
  /** A query aborted (the SDK's AbortError) escaping a command: reported as an interrupt. */
  aborted: EXIT.interrupted,
  /** An OTEL_* variable forkloop cannot follow (R-V5). */
  invalid_telemetry_config: EXIT.usage,
  /** A disk that is full or read-only, a permission, a file where a directory belongs. */
  file_system: EXIT.usage,
  /** A damaged transcript, or one that could not be written: the message names the repair. */
  transcript_corrupt: EXIT.usage,
  transcript_write_failed: EXIT.usage,
  // @forkloop/batch's BatchError codes (BATCH_ERROR_CODES).
  invalid_batch: EXIT.usage,
  batch_dir_unwritable: EXIT.usage,
  journal_write_failed: EXIT.usage,
  report_write_failed: EXIT.usage,
  batches_api_unavailable: EXIT.usage,
  dirty_worktree: EXIT.usage,
  queue_unreachable: EXIT.usage,
  queue_unsafe: EXIT.usage,
  queue_redis_error: EXIT.usage,
};

/** The exit code for a failure's code (R-A7); unknown codes are bugs. */
export function exitCodeForError(code: string): ExitCode {
  return Object.hasOwn(EXIT_FOR_ERROR_CODE, code) ? (EXIT_FOR_ERROR_CODE[code] as ExitCode) : EXIT.internal;
}
