/**
 * `@forkloop/batch/internal`: what `forkloop batch` and `forkloop worker` print, shared with the
 * CLI so it only wires argv to options and these texts to its streams. Not API: the sentences
 * name the CLI's commands and may change with them.
 */
export {
  type BatchEnding,
  type BatchStatus,
  type BatchSummary,
  describeLocalOutcome,
  describeQueuedOutcome,
  finishedBatchStatus,
  formatBatchSummary,
} from "../batch-summary.js";
export {
  batchStatusJson,
  batchViewSummary,
  formatBatchListLine,
  formatBatchStatus,
} from "../batch-view-text.js";
export { queuedRunRefusal } from "../compose-batch.js";
export { describeWorkerEvent, workerPolicyNotice } from "../queue-worker-log.js";
export { reduceLeaseFromEnv } from "../queued-batch-run.js";
