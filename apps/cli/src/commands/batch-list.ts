import { join } from "node:path";
import {
  type BatchReport,
  type BatchSpec,
  type BatchView,
  formatTotals,
  viewBatch,
  viewBatches,
} from "@forkloop/batch";
import { batchesDirs, checkId, type ProjectState } from "@forkloop/sdk";
import { failedItemsLine } from "../batch-summary.js";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode } from "../exit-codes.js";

function state(view: BatchView): string {
  const t = view.report.totals;
  if (view.spec.queue !== undefined && !view.queueReport) return `on the queue ${view.spec.queue}`;
  if (view.runningBy !== null) return `running (${view.runningBy})`;
  if (t.pending > 0) return "stopped (resume it)";
  if (view.reduceDue)
    return view.report.reduce?.status === "failed"
      ? "its reduce failed (resume it)"
      : "stopped before its reduce (resume it)";
  return t.failed > 0 ? "finished with failures" : "finished";
}

/** `forkloop batch list`: every batch of the project, newest first. `batch status ID`: one batch. */
export async function batchListCommand(
  action: "list" | "status",
  id: string | undefined,
  options: { state: ProjectState; json: boolean },
  context: CommandContext,
): Promise<ExitCode> {
  const out = (line: string) => context.stdout.write(`${line}\n`);
  if (action === "status") {
    if (id === undefined)
      throw new CliError("forkloop batch status needs a batch id: `forkloop batch status ID`.");
    const view = await viewBatch(options.state, checkId("batch", id));
    if (options.json) {
      const reduce = view.report.reduce;
      out(JSON.stringify({ ...summaryOf(view), items: view.report.items, ...(reduce ? { reduce } : {}) }));
      return EXIT.ok;
    }
    out(`batch ${view.spec.id} · ${state(view)} · created ${view.spec.createdAt} · model ${view.spec.model}`);
    out(`source: ${sourceOf(view.spec)} · prompt: ${JSON.stringify(view.spec.prompt)}`);
    out(formatTotals(view.report).split("\n").slice(0, 2).join("\n"));
    if (view.spec.reduce !== undefined) out(reduceStatus(view.spec.reduce, view.report.reduce));
    out(`state:  ${view.dir}`);
    out(`report: ${join(view.spec.outputDir, "report.md")}`);
    if (view.spec.queue !== undefined)
      out(`attach: forkloop batch --resume ${view.spec.id} --queue ${view.spec.queue}`);
    else if (view.runningBy === null && (view.report.totals.pending > 0 || view.reduceDue))
      out(`resume: forkloop batch --resume ${view.spec.id}`);
    if (view.spec.queue === undefined) {
      const failed = failedItemsLine(view.report, `forkloop batch --resume ${view.spec.id}`);
      if (failed !== "") context.stdout.write(failed);
    }
    return EXIT.ok;
  }
  const views = await viewBatches(options.state, (name, error) =>
    context.stderr.write(
      `forkloop batch list: ${name}: ${error instanceof Error ? error.message : String(error)}\n`,
    ),
  );
  if (options.json) {
    for (const view of views) out(JSON.stringify(summaryOf(view)));
    return EXIT.ok;
  }
  if (views.length === 0) {
    context.stderr.write(
      `no batches for ${options.state.projectRoot} yet (looked in ${batchesDirs(options.state).join(", ")}); \`forkloop batch --files … --prompt …\` starts one.\n`,
    );
    return EXIT.ok;
  }
  for (const view of views) {
    const t = view.report.totals;
    out(
      `${view.spec.id}  ${view.spec.createdAt}  ${t.succeeded}/${t.items} succeeded, ${t.failed} failed, ${t.pending} pending  $${t.costUsd.toFixed(4)}  ${state(view)}  ${sourceOf(view.spec)}`,
    );
  }
  return EXIT.ok;
}

/** R-B7: the reduce's state and its answer (the batch's result), or that it has not run yet. */
function reduceStatus(prompt: string, reduce: BatchReport["reduce"]): string {
  if (reduce === undefined)
    return `reduce: not run yet (${JSON.stringify(prompt)}): it runs once the items are settled`;
  const head = `reduce: ${reduce.status} over ${reduce.items} item${reduce.items === 1 ? "" : "s"} · $${reduce.costUsd.toFixed(4)}`;
  if (reduce.status === "succeeded") return `${head}\nresult:\n${reduce.text ?? ""}`;
  if (reduce.error !== null) return `${head} · ${reduce.error.code}: ${reduce.error.message}`;
  return `${head} (interrupted: a resume runs it)`;
}

function sourceOf(spec: BatchSpec): string {
  return spec.source.kind === "files" ? `--files ${spec.source.pattern}` : `--items ${spec.source.path}`;
}

function summaryOf(view: BatchView) {
  return {
    batchId: view.spec.id,
    state: state(view),
    createdAt: view.spec.createdAt,
    model: view.spec.model,
    source: view.spec.source,
    totals: view.report.totals,
    stateDir: view.dir,
    outputDir: view.spec.outputDir,
    ...(view.spec.queue === undefined ? {} : { queue: view.spec.queue }),
  };
}
