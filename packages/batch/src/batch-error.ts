import { OptionsError } from "@forkloop/sdk/errors";

/**
 * R-A7: what a batch refuses before or while it runs, each with a stable code a program can branch
 * on. All are the caller's to fix (a flag, a directory, the endpoint, a full disk): the message
 * names the problem and the fix, and nothing finished is lost.
 */
export const BATCH_ERROR_CODES = [
  /** The flags or stored settings of a batch do not make a batch (a bad combination, a bad value). */
  "invalid_batch",
  /** A directory the batch writes to (state, output) is not writable or has no room. */
  "batch_dir_unwritable",
  /** The journal refused a record (a full disk …): recorded results are safe, resume once fixed. */
  "journal_write_failed",
  /** The report could not be written: every result is in the journal, resume writes it. */
  "report_write_failed",
  /** `--api batches` against an endpoint without the Message Batches API. */
  "batches_api_unavailable",
  /** An isolated batch over a working tree with uncommitted changes. */
  "dirty_worktree",
  /** `--queue`: Redis is down or refuses us (start it, fix the URL). */
  "queue_unreachable",
  /** `--queue`: a Redis that would lose or duplicate work (an evicting policy, a replica), R-R10. */
  "queue_unsafe",
  /** `--queue`: Redis refused the batch mid-run (OOM, READONLY, NOAUTH …); the message names the fix. */
  "queue_redis_error",
] as const;

export type BatchErrorCode = (typeof BATCH_ERROR_CODES)[number];

export class BatchError extends OptionsError {
  override readonly name: string = "BatchError";
  declare readonly code: BatchErrorCode;

  constructor(code: BatchErrorCode, message: string, data?: Record<string, unknown>) {
    super(message, { code, data });
  }
}
