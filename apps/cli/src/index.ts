/**
 * `@forkloop/cli`: the `forkloop` command (entry: main.ts). This module exports what tests and
 * tools outside the CLI read: the stream-json line schemas, the batch journal reader, the job
 * backend interface and the exit codes.
 */

export {
  type ResultLine,
  resultLineSchema,
  type StreamJsonLine,
  streamJsonLineSchema,
} from "@forkloop/sdk";
export { encodeRecord, LogWriteError, openLog, readLog } from "./append-log.js";
export { buildReport, type ResultLine as BatchResultLine } from "./batch-report.js";
export { EXIT, type ExitCode, exitCodeForBatch, exitCodeForTerminal } from "./exit-codes.js";
export type {
  Claim,
  ItemError,
  ItemResult,
  ItemState,
  ItemStatus,
  JobBackend,
  JobItem,
  SettleOutcome,
} from "./job-backend.js";
export {
  type JournalRecord,
  journalRecordSchema,
  openLocalJournalBackend,
  readJournal,
  replayJournal,
} from "./local-journal-backend.js";
