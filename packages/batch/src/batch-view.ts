import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { batchesDirs, type ProjectState } from "@forkloop/sdk";
import { judgeOwner, readLockFile } from "@forkloop/sdk/owner-lock";
import { readReduce, reduceDue } from "./batch-reduce.js";
import { type BatchReport, buildReport, toReduceLine } from "./batch-report.js";
import { type BatchSpec, loadBatch } from "./batch-store.js";
import { LOCK_FILE, readJournal, replayJournal } from "./local-journal-backend.js";

/** A batch as `batch list` / `batch status` read it: its spec, its items' states, and who runs it. */
export interface BatchView {
  readonly spec: BatchSpec;
  readonly dir: string;
  readonly report: BatchReport;
  /** The batch's lock owner when it still runs (R-R5): "pid N on HOST since …", else null. */
  readonly runningBy: string | null;
  /** R-B7: every item is settled but the reduce has not answered for these results (a resume runs it). */
  readonly reduceDue?: boolean;
  /** A `--queue` batch: whether its producer wrote report.json (its items all settled). */
  readonly queueReport?: boolean;
}

/** One batch of the project, read from its state (its journal, or a queued batch's report.json). */
export async function viewBatch(state: ProjectState, id: string): Promise<BatchView> {
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
 * Every batch of the project, newest first. A batch that cannot be read is passed to `damaged`
 * with its error: one damaged batch must not hide the others.
 */
export async function viewBatches(
  state: ProjectState,
  damaged: (name: string, error: unknown) => void,
): Promise<BatchView[]> {
  const names = new Set(
    (await Promise.all(batchesDirs(state).map((dir) => readdir(dir).catch(() => [] as string[])))).flat(),
  );
  const views: BatchView[] = [];
  for (const name of names) {
    try {
      views.push(await viewBatch(state, name));
    } catch (error) {
      damaged(name, error);
    }
  }
  return views.sort((a, b) => b.spec.createdAt.localeCompare(a.spec.createdAt));
}

/**
 * A `--queue` batch keeps no journal here (its items' states are on Redis): its report.json once
 * the producer wrote it, else nothing finished that this host knows of. R-B7: the producer writes
 * report.json after its reduce, and reduce.json before and after it — so while the reduce runs
 * (or after a producer stopped during it) reduce.json is the later word on the reduce.
 */
async function viewQueuedBatch(spec: BatchSpec, dir: string): Promise<BatchView> {
  const text = await readFile(join(spec.outputDir, "report.json"), "utf8").catch(() => undefined);
  const written = text === undefined ? undefined : parseReport(text);
  const report = written ?? buildReport(spec.id, [], 0);
  const reduce = spec.reduce === undefined ? undefined : await readReduce(dir);
  const known = report.reduce;
  const line =
    reduce === undefined || (known?.attempts === reduce.attempt && known.status === reduce.status)
      ? undefined
      : toReduceLine(reduce, join(dir, "transcripts"));
  return {
    spec,
    dir,
    // Its transcript is named when this host ran it (another producer's stays on its host).
    report:
      line === undefined
        ? report
        : { ...report, reduce: existsSync(line.transcript ?? "") ? line : { ...line, transcript: null } },
    runningBy: null,
    queueReport: written !== undefined,
  };
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
