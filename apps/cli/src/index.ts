/**
 * `@forkloop/cli`: the `forkloop` command (entry: main.ts). This module exports what tests and
 * tools outside the CLI read: the command line as a function (`main`, `runCommandLine`), the
 * stream-json line schemas and the exit codes. The batch journal
 * reader and the job backend interface are `@forkloop/batch`'s; they are re-exported here so code
 * that read them from the CLI keeps working.
 */

export {
  type Claim,
  encodeRecord,
  type ItemError,
  type ItemResult,
  type ItemState,
  type ItemStatus,
  type JobBackend,
  type JobItem,
  type JournalRecord,
  journalRecordSchema,
  LogWriteError,
  openLocalJournalBackend,
  openLog,
  type ResultLine as BatchResultLine,
  readJournal,
  readLog,
  replayJournal,
  type SettleOutcome,
} from "@forkloop/batch";
export {
  type ResultLine,
  resultLineSchema,
  type StreamJsonLine,
  streamJsonLineSchema,
} from "@forkloop/sdk";
export { MAIN_USAGE, main, runCommandLine } from "./cli.js";
export type { CommandContext } from "./command-context.js";
export { EXIT, type ExitCode, exitCodeForBatch, exitCodeForTerminal } from "./exit-codes.js";
