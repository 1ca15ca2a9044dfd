import { join } from "node:path";
import type { BatchReport } from "./batch-report.js";
import { formatTotals } from "./batch-report.js";
import type { BatchSpec } from "./batch-store.js";
import { failedItemsLine } from "./batch-summary.js";
import type { BatchView } from "./batch-view.js";

/** A batch's state in a word or a few, as `batch list` and `batch status` say it. */
function stateOf(view: BatchView): string {
  const t = view.report.totals;
  // R-B7: its producer writes reduce.json as it starts the reduce and report.json once it ends.
  if (view.spec.queue !== undefined && view.report.reduce?.status === "running")
    return "its reduce is running, or its producer stopped during it (attach to finish it)";
  if (view.spec.queue !== undefined && !view.queueReport) return `on the queue ${view.spec.queue}`;
  if (view.runningBy !== null) return `running (${view.runningBy})`;
  if (t.pending > 0) return "stopped (resume it)";
  if (view.reduceDue)
    return view.report.reduce?.status === "failed"
      ? "its reduce failed (resume it)"
      : "stopped before its reduce (resume it)";
  return t.failed > 0 ? "finished with failures" : "finished";
}

/** `forkloop batch status ID`: one batch's progress, where its state and report are, and how to go on. */
export function formatBatchStatus(view: BatchView): string {
  const lines = [
    `batch ${view.spec.id} · ${stateOf(view)} · created ${view.spec.createdAt} · model ${view.spec.model}`,
    `source: ${sourceOf(view.spec)} · prompt: ${JSON.stringify(view.spec.prompt)}`,
    formatTotals(view.report).split("\n").slice(0, 2).join("\n"),
  ];
  if (view.spec.reduce !== undefined)
    lines.push(reduceStatus(view.spec.reduce, view.report.reduce, view.spec.queue !== undefined));
  lines.push(`state:  ${view.dir}`, `report: ${join(view.spec.outputDir, "report.md")}`);
  if (view.spec.queue !== undefined)
    lines.push(`attach: forkloop batch --resume ${view.spec.id} --queue ${view.spec.queue}`);
  else if (view.runningBy === null && (view.report.totals.pending > 0 || view.reduceDue))
    lines.push(`resume: forkloop batch --resume ${view.spec.id}`);
  const text = `${lines.join("\n")}\n`;
  if (view.spec.queue !== undefined) return text;
  return `${text}${failedItemsLine(view.report, `forkloop batch --resume ${view.spec.id}`)}`;
}

/** `forkloop batch status ID --output-format json`: the summary with every item (and the reduce). */
export function batchStatusJson(view: BatchView): Record<string, unknown> {
  const reduce = view.report.reduce;
  return { ...batchViewSummary(view), items: view.report.items, ...(reduce ? { reduce } : {}) };
}

/** `forkloop batch list`: one batch a line. */
export function formatBatchListLine(view: BatchView): string {
  const t = view.report.totals;
  return `${view.spec.id}  ${view.spec.createdAt}  ${t.succeeded}/${t.items} succeeded, ${t.failed} failed, ${t.pending} pending  $${t.costUsd.toFixed(4)}  ${stateOf(view)}  ${sourceOf(view.spec)}`;
}

/** R-B7: the reduce's state and its answer (the batch's result), or that it has not run yet. */
function reduceStatus(prompt: string, reduce: BatchReport["reduce"], queued: boolean): string {
  if (reduce === undefined)
    return `reduce: not run yet (${JSON.stringify(prompt)}): it runs once the items are settled`;
  const head = `reduce: ${reduce.status} over ${reduce.items} item${reduce.items === 1 ? "" : "s"} · $${reduce.costUsd.toFixed(4)}`;
  if (reduce.status === "succeeded") return `${head}\nresult:\n${reduce.text ?? ""}`;
  if (reduce.error !== null) return `${head} · ${reduce.error.code}: ${reduce.error.message}`;
  // A queued batch's producer leaves no lock here: this host cannot tell running from stopped.
  if (queued) return `${head} (running, or stopped during it: attaching runs it)`;
  return `${head} (interrupted: a resume runs it)`;
}

function sourceOf(spec: BatchSpec): string {
  return spec.source.kind === "files" ? `--files ${spec.source.pattern}` : `--items ${spec.source.path}`;
}

/** `forkloop batch list --output-format json`: one batch as an object a line. */
export function batchViewSummary(view: BatchView) {
  return {
    batchId: view.spec.id,
    state: stateOf(view),
    createdAt: view.spec.createdAt,
    model: view.spec.model,
    source: view.spec.source,
    totals: view.report.totals,
    stateDir: view.dir,
    outputDir: view.spec.outputDir,
    ...(view.spec.queue === undefined ? {} : { queue: view.spec.queue }),
  };
}
