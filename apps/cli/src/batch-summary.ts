import { type BatchReport, formatTotals, plural, type WrittenReport } from "@forkloop/batch";
import type { CommandContext } from "./command-context.js";
import { EXIT, type ExitCode } from "./exit-codes.js";

/** How a batch ended, as `--output-format json` and `batch status` say it. */
export type BatchStatus = "succeeded" | "partial" | "failed" | "stopped" | "interrupted" | "budget_reached";

/** The status of a batch that ran to its end, from its exit code (exit-codes.ts). */
export function finishedStatus(code: ExitCode): BatchStatus {
  return code === EXIT.ok ? "succeeded" : code === EXIT.batchPartial ? "partial" : "failed";
}

/**
 * The summary on stdout of a local or a `--queue` batch: the totals and the report's paths, or
 * with `--output-format json` one `batch_result` object (the report's rows included).
 */
export function printBatchSummary(
  summary: {
    readonly report: BatchReport;
    readonly paths: Omit<WrittenReport, "keptPrevious">;
    /** report.html's path, or the command that writes it (a local batch). */
    readonly html?: string;
    readonly status: BatchStatus;
    readonly json: boolean;
    /** A local batch's resume command: failed items are listed with it and `--retry-failed` (R-R9). */
    readonly resume?: string;
  },
  context: CommandContext,
): void {
  const { report, paths, html, status } = summary;
  if (summary.json) {
    const allPaths = { ...paths, ...(html === undefined ? {} : { html }) };
    context.stdout.write(`${JSON.stringify({ type: "batch_result", status, ...report, paths: allPaths })}\n`);
    return;
  }
  const queue = report.queue
    ? `queue: ${plural(report.queue.reExecutedItems, "item")} ran more than once · ${plural(report.queue.duplicateExecutions, "duplicate completion")} dropped\n`
    : "";
  const failed = summary.resume === undefined ? "" : failedItemsLine(report, summary.resume);
  context.stdout.write(
    `${reduceAnswer(report)}${formatTotals(report)}\n${queue}${failed}results: ${paths.results}\nreport:  ${paths.markdown}\n${html === undefined ? "" : `html:    ${html}\n`}`,
  );
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
export function reduceAnswer(report: BatchReport): string {
  const reduce = report.reduce;
  if (reduce === undefined) return "";
  const head = `result (reduce over ${plural(reduce.items, "item")}, $${reduce.costUsd.toFixed(4)}):`;
  if (reduce.status === "succeeded") return `${head}\n${reduce.text ?? ""}\n\n`;
  const why = reduce.error === null ? "not finished" : `${reduce.error.code}: ${reduce.error.message}`;
  return `result: the reduce ${reduce.status === "failed" ? "failed" : "did not finish"} (${why})\n\n`;
}
