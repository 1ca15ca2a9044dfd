import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { replaceAtomically } from "@forkloop/tools/workspace";
import type { BatchReport } from "./batch-report.js";
import { formatReportMarkdown } from "./batch-report-markdown.js";

export interface WrittenReport {
  readonly results: string;
  readonly json: string;
  readonly markdown: string;
  /**
   * R-R4: the `results.jsonl` already there held more finished items than this report (the
   * journal lost records): it was kept, and this report's results went to `results` instead.
   */
  readonly keptPrevious?: { readonly path: string; readonly finished: number };
}

/**
 * Writes `results.jsonl`, `report.json` (totals and every item's row) and `report.md` into `dir`,
 * each atomically (temp file, fsync, rename: a crash or a full disk leaves the old file or the
 * new one); returns their paths. R-R4: never replaces a `results.jsonl` that lists more
 * finished items than this report.
 */
export async function writeReport(dir: string, report: BatchReport): Promise<WrittenReport> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const previous = join(dir, "results.jsonl");
  const finishedBefore = await finishedItemsIn(previous);
  const finished = report.totals.succeeded + report.totals.failed;
  const keep = finishedBefore > finished;
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const paths = {
    results: keep ? join(dir, `results-${stamp}.jsonl`) : previous,
    json: join(dir, "report.json"),
    markdown: join(dir, "report.md"),
  };
  await replaceAtomically(paths.results, report.items.map((line) => `${JSON.stringify(line)}\n`).join(""));
  await replaceAtomically(paths.json, `${JSON.stringify(report, null, 2)}\n`);
  await replaceAtomically(paths.markdown, formatReportMarkdown(report));
  return keep ? { ...paths, keptPrevious: { path: previous, finished: finishedBefore } } : paths;
}

/** Items with status succeeded/failed in an existing results.jsonl (0 when there is none). */
async function finishedItemsIn(path: string): Promise<number> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
  return text.split("\n").filter((line) => /"status":"(succeeded|failed)"/.test(line)).length;
}
