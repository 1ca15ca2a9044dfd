/**
 * `@forkloop/cli`: the `forkloop` command (entry: main.ts). This module exports what tests and
 * tools outside the CLI read: the command line as a function (`runCommandLine`), the stream-json
 * line schema and the exit codes. The batch journal's and the job backend's types are
 * `@forkloop/batch`'s, named here as the CLI writes them.
 */

export type {
  Claim,
  ItemError,
  ItemResult,
  ItemState,
  ItemStatus,
  JobBackend,
  JobItem,
  JournalRecord,
  ResultLine as BatchResultLine,
  SettleOutcome,
} from "@forkloop/batch";
export { type ResultLine, type StreamJsonLine, streamJsonLineSchema } from "@forkloop/sdk";
export { MAIN_USAGE, runCommandLine } from "./cli.js";
export type { CommandContext } from "./command-context.js";
export { EXIT, type ExitCode, exitCodeForBatch, exitCodeForTerminal } from "./exit-codes.js";
