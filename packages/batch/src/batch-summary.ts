import type { BatchReport, BatchTotals } from "./batch-report.js";
import { formatTotals } from "./batch-report.js";
import type { LocalBatchOutcome } from "./local-batch-run.js";
import { plural } from "./plural.js";
import type { QueuedBatchOutcome } from "./queued-batch-run.js";
import type { WrittenReport } from "./write-batch-report.js";

/** How a batch ended, as `--output-format json` and `batch status` say it (the exit code follows it). */
export type BatchStatus = "succeeded" | "partial" | "failed" | "stopped" | "interrupted" | "budget_reached";

/** The status of a batch that ran to its end: succeeded only when every item did. */
export function finishedBatchStatus(
  totals: Pick<BatchTotals, "succeeded" | "failed" | "pending">,
): "succeeded" | "partial" | "failed" {
  if (totals.failed === 0 && totals.pending === 0) return "succeeded";
  return totals.succeeded === 0 ? "failed" : "partial";
}

/** How a batch ended and what the user is told about it on stderr (a line each, none when it just finished). */
export interface BatchEnding {
  readonly status: BatchStatus;
  readonly notices: readonly string[];
}

/**
 * How a local batch ended (R-R9, R-B7): a stop, an interrupt, a failed reduce or a reached budget
 * is told with the command that goes on from there (`resume`, the batch's `--resume` command).
 */
export function describeLocalOutcome(
  outcome: LocalBatchOutcome,
  options: { readonly resume: string; readonly limitUsd: number | undefined },
): BatchEnding {
  const { spec, report } = outcome;
  const { resume, limitUsd } = options;
  if (outcome.kind === "finished") {
    // R-R7: nothing ran; how to re-run failed items is in the summary.
    const { succeeded, failed } = report.totals;
    return {
      status: "succeeded",
      notices: [
        `forkloop batch ${spec.id} is finished (${plural(succeeded, "item")} succeeded, ${failed} failed): nothing to run.`,
      ],
    };
  }
  const { summary, stopFailure, reduce, reduceOverBudget } = outcome;
  const status = finishedBatchStatus(report.totals);
  if (summary.stopped !== undefined) {
    // R-R9: a failure of the whole batch; nothing is lost, the rest is pending.
    return {
      status: "stopped",
      notices: [
        `forkloop batch ${spec.id}: stopped: ${summary.stopped}; ${plural(report.totals.pending, "item")} left pending — fix it, then \`${resume}${stopFailure?.resumeWith ?? ""}\` finishes them.`,
      ],
    };
  }
  if (summary.interrupted || reduce?.kind === "interrupted") {
    return { status: "interrupted", notices: [`interrupted: resume with \`${resume}\``] };
  }
  if (reduce?.record.status === "failed") {
    // R-B7: the items' results stand; the reduce runs again on a resume.
    return {
      status: status === "succeeded" ? "partial" : status,
      notices: [
        `forkloop batch ${spec.id}: the reduce failed (${reduce.record.error?.code}: ${reduce.record.error?.message}); the items' results are kept — \`${resume}\` runs the reduce again, and nothing else.`,
      ],
    };
  }
  if (reduceOverBudget !== undefined) {
    // R-B7: the reduce counts against the budget; the items' results stand.
    return {
      status: "budget_reached",
      notices: [
        `forkloop batch: --max-budget-usd ${limitUsd} reached: the items spent $${reduceOverBudget.spentUsd.toFixed(4)}, so the reduce (about $${reduceOverBudget.estimateUsd.toFixed(4)}) was not started; resume with a higher budget to run it, and nothing else: \`${resume} --max-budget-usd N\``,
      ],
    };
  }
  if (summary.budgetReached && report.totals.pending > 0) {
    return {
      status: "budget_reached",
      notices: [
        `forkloop batch: --max-budget-usd ${limitUsd} reached: ${plural(report.totals.pending, "item")} not started; resume with a higher budget: \`${resume} --max-budget-usd N\``,
      ],
    };
  }
  return { status, notices: [] };
}

/** How a `--queue` batch's producer ended (R-B1, R-R10): lost from Redis, interrupted, or finished. */
export function describeQueuedOutcome(
  outcome: QueuedBatchOutcome,
  given: { readonly cwd?: string | undefined } = {},
): BatchEnding {
  const { spec, summary, report, paths, queue, reduce, reduceNotRun } = outcome;
  const notices: string[] = [];
  // The project it was given (`--cwd`), as a local batch's resume command names it.
  const reattach = `forkloop batch --resume ${spec.id} --queue ${queue}${given.cwd ? ` --cwd ${given.cwd}` : ""}`;
  if (summary.lost) {
    notices.push(
      `batch ${spec.id} was lost from Redis at ${queue} with ${plural(report.totals.pending, "item")} unfinished; the ${plural(report.totals.succeeded + report.totals.failed, "result")} received are in ${paths.results}. Make Redis keep its data (appendonly yes), then run the unfinished items as a new batch.`,
    );
  }
  if (summary.interrupted) {
    notices.push(`interrupted: the workers go on; re-attach with \`${reattach}\``);
  }
  if (reduce?.kind === "interrupted") {
    // R-B7: every item is settled; the re-attach runs the reduce alone.
    notices.push(`interrupted during the reduce: re-attach with \`${reattach}\` to run it, and nothing else`);
    return { status: "interrupted", notices };
  }
  const status = summary.interrupted ? "interrupted" : finishedBatchStatus(report.totals);
  if (reduceNotRun !== undefined) {
    // R-B7: the items' results stand; a re-attach from a host that can runs the reduce alone.
    notices.push(
      `forkloop batch ${spec.id}: the reduce did not start here (${reduceNotRun}); the items' results are kept — fix it, then \`${reattach}\` runs the reduce, and nothing else.`,
    );
    return { status: status === "succeeded" ? "partial" : status, notices };
  }
  if (reduce?.record.status === "failed") {
    notices.push(
      `forkloop batch ${spec.id}: the reduce failed (${reduce.record.error?.code}: ${reduce.record.error?.message}); the items' results are kept — \`${reattach}\` runs the reduce again, and nothing else.`,
    );
    return { status: status === "succeeded" ? "partial" : status, notices };
  }
  return { status, notices };
}

/** What a batch's summary is made of (a local or a `--queue` batch). */
export interface BatchSummary {
  readonly report: BatchReport;
  readonly paths: Omit<WrittenReport, "keptPrevious">;
  /** report.html's path, or the command that writes it (a local batch). */
  readonly html?: string;
  readonly status: BatchStatus;
  readonly json: boolean;
  /** A local batch's resume command: failed items are listed with it and `--retry-failed` (R-R9). */
  readonly resume?: string;
}

/**
 * The summary of a local or a `--queue` batch: the totals and the report's paths, or as JSON one
 * `batch_result` object (the report's rows included). Ends with a newline.
 */
export function formatBatchSummary(summary: BatchSummary): string {
  const { report, paths, html, status } = summary;
  if (summary.json) {
    const allPaths = { ...paths, ...(html === undefined ? {} : { html }) };
    return `${JSON.stringify({ type: "batch_result", status, ...report, paths: allPaths })}\n`;
  }
  const queue = report.queue
    ? `queue: ${plural(report.queue.reExecutedItems, "item")} ran more than once · ${plural(report.queue.duplicateExecutions, "duplicate completion")} dropped\n`
    : "";
  const failed = summary.resume === undefined ? "" : failedItemsLine(report, summary.resume);
  return `${reduceAnswer(report)}${formatTotals(report)}\n${queue}${failed}results: ${paths.results}\nreport:  ${paths.markdown}\n${html === undefined ? "" : `html:    ${html}\n`}`;
}

/** R-R9: the failed items by label, and the command that runs them again ("" when none failed). */
export function failedItemsLine(report: BatchReport, resume: string): string {
  const failed = report.items.filter((item) => item.status === "failed").map((item) => item.label);
  if (failed.length === 0) return "";
  const shown = failed.slice(0, 5).join(", ");
  const more = failed.length > 5 ? ` and ${failed.length - 5} more` : "";
  const conflicts = report.items.filter((item) => item.error?.code === "conflict").length;
  // R-B4: a conflict is re-run on the tree as it is now, which --retry-failed does not do.
  const retryConflicts =
    conflicts === 0
      ? ""
      : `; \`${resume} --retry-conflicts\` runs ${conflicts === 1 ? "the conflict" : `the ${conflicts} conflicts`} alone again, on the tree as it is now`;
  return `failed: ${shown}${more} — \`${resume} --retry-failed\` runs ${failed.length === 1 ? "it" : "them"} again${retryConflicts}\n`;
}

/**
 * R-B7: the reduce's answer first — it is the batch's result — with what it read and cost ("" for
 * a batch without one).
 */
function reduceAnswer(report: BatchReport): string {
  const reduce = report.reduce;
  if (reduce === undefined) return "";
  const head = `result (reduce over ${plural(reduce.items, "item")}, $${reduce.costUsd.toFixed(4)}):`;
  if (reduce.status === "succeeded") return `${head}\n${reduce.text ?? ""}\n\n`;
  const why = reduce.error === null ? "not finished" : `${reduce.error.code}: ${reduce.error.message}`;
  return `result: the reduce ${reduce.status === "failed" ? "failed" : "did not finish"} (${why})\n\n`;
}
