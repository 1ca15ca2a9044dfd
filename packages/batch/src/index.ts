/**
 * `@forkloop/batch`: batches as a library. Items and templates, the `JobBackend` interface and
 * its local journal backend (with its append log and durable writes), `runBatch` on the
 * orchestrator's worker pool, results and the report. `apps/cli` turns argv into these options
 * and prints what they report.
 */

export { openWorkspaceIsolation, type WorkspaceIsolation } from "@forkloop/tools/workspace";
export * from "./append-log.js";
export { type DryRunEstimate, formatDryRun } from "./batch-dry-run.js";
export { enqueueOnce, type ItemRelist } from "./batch-enqueue.js";
export { BATCH_ERROR_CODES, BatchError, type BatchErrorCode } from "./batch-error.js";
export { type AttemptRun, type BatchHistory, batchHistory, type ItemHistory } from "./batch-history.js";
export {
  globFiles,
  type ItemSource,
  type LoadedItems,
  type SkippedFile,
} from "./batch-items.js";
export type { BatchPlan } from "./batch-plan.js";
export type { ReduceOutcome, ReduceRecord } from "./batch-reduce.js";
export type {
  BatchReport,
  BatchTotals,
  ReduceLine,
  ReportOptions,
  ResultLine,
} from "./batch-report.js";
export * from "./batch-report-markdown.js";
export * from "./batch-runner.js";
export { MAX_BATCH_TURNS } from "./batch-setting-checks.js";
export { type BatchSpec, createBatch, loadBatch } from "./batch-store.js";
export { type BatchView, viewBatch, viewBatches } from "./batch-view.js";
export {
  type BatchComposition,
  type BatchCompositionFlags,
  type BatchFlagReader,
  batchModeRefusal,
  queueReattachRefusal,
  type ResumableBatch,
  resumableBatch,
} from "./compose-batch.js";
export * from "./enqueue-seal.js";
export type { BatchExecution, BatchHost, BatchOutcome } from "./execute-local-batch.js";
export { type ItemIsolator, isolateItems } from "./item-isolation.js";
export type * from "./job-backend.js";
export { type LocalBatchOutcome, type LocalBatchRun, runLocalBatch } from "./local-batch-run.js";
export * from "./local-journal-backend.js";
export {
  type BatchJournalRecord,
  MESSAGE_BATCHES_LOG,
  type MessageBatchJournal,
  openMessageBatchJournal,
} from "./message-batch-journal.js";
export {
  type MessageBatchesClient,
  MessageBatchRounds,
  type RoundEvent,
} from "./message-batch-rounds.js";
export { BATCH_DEFAULT_MODEL } from "./new-batch-spec.js";
export * from "./plural.js";
export type { BatchAgentSettings } from "./pool-executor.js";
export {
  type BatchHostFlags,
  type BatchPreparation,
  type PreparedLocalBatch,
  type PreparedQueuedBatch,
  prepareLocalBatch,
  prepareQueuedBatch,
} from "./prepare-batch.js";
export type { ProgressSnapshot, ProgressStream } from "./progress-display.js";
export {
  connectQueue,
  parseQueueUrl,
  type QueueAddress,
  QueueUnreachableError,
} from "./queue-connection.js";
export * from "./queue-health.js";
export { openQueueLedger } from "./queue-ledger.js";
export type { QueuedRunEvent, QueuedRunOptions, QueuedRunSummary } from "./queue-producer.js";
export { type QueueService, type QueueServiceOptions, startQueueService } from "./queue-service.js";
export {
  beginExecution,
  ITEMS_QUEUE,
  type ItemJobData,
  itemJobId,
  QUEUE_PREFIX,
  type QueuedBatch,
  type QueuedBatchState,
  type QueuedMcpServer,
  type RegisterOutcome,
  type RunRecord,
  readBatchState,
  recordOutcome,
  registerBatch,
  type StoredBatch,
} from "./queue-store.js";
export {
  BatchRefusedError,
  type ExecutorWiring,
  type QueueWorker,
  type QueueWorkerEvent,
  type QueueWorkerOptions,
} from "./queue-worker.js";
export {
  executeQueuedBatch,
  type QueuedBatchHost,
  type QueuedBatchOutcome,
  type QueuedBatchRun,
  type QueueTarget,
} from "./queued-batch-run.js";
export { type RequestLimit, type RequestLimiter, tryAdmitRequest } from "./request-limiter.js";
export type { StartSettings } from "./resume-settings.js";
export * from "./worker-policy.js";
export type { WrittenReport } from "./write-batch-report.js";
