import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type BatchReport,
  type BatchSpec,
  buildReport,
  formatTotals,
  LOCK_FILE,
  loadBatch,
  readJournal,
  readReduce,
  reduceDue,
  replayJournal,
} from "@forkloop/batch";
import { batchesDirs, checkId, type ProjectState } from "@forkloop/sdk";
import { judgeOwner, readLockFile } from "@forkloop/sdk/owner-lock";
import { failedItemsLine } from "../batch-summary.js";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode } from "../exit-codes.js";

/** A batch as `batch list` / `batch status` read it: its spec, its items' states, and who runs it. */
interface BatchView {
  readonly spec: BatchSpec;
  readonly dir: string;
  readonly report: ReturnType<typeof buildReport>;
  /** The batch's lock owner when it still runs (R-R5): "pid N on HOST since …", else null. */
  readonly runningBy: string | null;
  /** R-B7: every item is settled but the reduce has not answered for these results (a resume runs it). */
  readonly reduceDue?: boolean;
  /** A `--queue` batch: whether its producer wrote report.json (its items all settled). */
  readonly queueReport?: boolean;
}

async function viewBatch(state: ProjectState, id: string): Promise<BatchView> {
  const { spec, dir } = await loadBatch(state, id);
  if (spec.queue !== undefined) return viewQueuedBatch(spec, dir);
  const { records } = await readJournal(dir);
  const { items } = replayJournal(records);
  const reduce = await readReduce(dir);
  const report = buildReport(spec.id, items, 0, {
    transcriptsDir: join(dir, "transcripts"),
    ...(reduce === undefined ? {} : { reduce }),
  });
  const reducing =
    spec.reduce !== undefined && report.totals.pending === 0 && (await reduceDue(dir, spec.reduce, items));
  return { spec, dir, report, runningBy: await runningOwner(join(dir, LOCK_FILE)), reduceDue: reducing };
}

/**
 * A `--queue` batch keeps no journal here (its items' states are on Redis): its report.json once
 * the producer wrote it, else nothing finished that this host knows of.
 */
async function viewQueuedBatch(spec: BatchSpec, dir: string): Promise<BatchView> {
  const text = await readFile(join(spec.outputDir, "report.json"), "utf8").catch(() => undefined);
  const written = text === undefined ? undefined : parseReport(text);
  const report = written ?? buildReport(spec.id, [], 0);
  return { spec, dir, report, runningBy: null, queueReport: written !== undefined };
}

/** report.json as writeReport wrote it; undefined when it is not one (damaged, or older). */
function parseReport(text: string): BatchReport | undefined {
  try {
    const json = JSON.parse(text) as Partial<BatchReport>;
    return typeof json.totals === "object" && json.totals !== null && Array.isArray(json.items)
      ? (json as BatchReport)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Who holds the batch's lock, when it is not an owner proven dead (R-R5: pid, host, since when). */
async function runningOwner(lockFile: string): Promise<string | null> {
  const lock = await readLockFile(lockFile).catch(() => undefined);
  if (lock === undefined || judgeOwner(lock.owner).state === "dead") return null;
  return `pid ${lock.owner.pid} on ${lock.owner.host} since ${lock.owner.since}`;
}

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
  const names = new Set(
    (
      await Promise.all(batchesDirs(options.state).map((dir) => readdir(dir).catch(() => [] as string[])))
    ).flat(),
  );
  const views: BatchView[] = [];
  for (const name of names) {
    try {
      views.push(await viewBatch(options.state, name));
    } catch (error) {
      // One damaged batch must not hide the others.
      context.stderr.write(
        `forkloop batch list: ${name}: ${error instanceof Error ? error.message : String(error)}\n`,
      );
    }
  }
  views.sort((a, b) => b.spec.createdAt.localeCompare(a.spec.createdAt));
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
