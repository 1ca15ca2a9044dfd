/**
 * `@forkloop/cli`: the `forkloop` command (entry: main.ts). This module exports what tests and
 * tools outside the CLI read: the stream-json line schemas and the exit codes (the batch journal
 * reader and the job backend interface are `@forkloop/batch`'s).
 */

export {
  type ResultLine,
  resultLineSchema,
  type StreamJsonLine,
  streamJsonLineSchema,
} from "@forkloop/sdk";
export { EXIT, type ExitCode, exitCodeForBatch, exitCodeForTerminal } from "./exit-codes.js";
