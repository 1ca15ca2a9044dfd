import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { replaceAtomically } from "./durable-file.js";
import type { ItemCompaction, ItemState, ItemUsage, RepeatedSideEffect } from "./job-backend.js";
import { plural } from "./plural.js";
import { cacheReadShare, formatCount, formatDuration, type ProgressSnapshot } from "./progress-display.js";

/** One line of `results.jsonl`: everything the report says about one item. */
export interface ResultLine {
  readonly id: string;
  readonly label: string;
  readonly status: ItemState["status"];
  readonly attempts: number;
  readonly turns: number;
  readonly usage: ItemUsage;
  readonly costUsd: number;
  readonly durationMs: number;
  /** Issue 11: model requests retried for this item (dropped streams, 529s, deadlines). */
  readonly apiRetries: number;
  readonly terminal: string | null;
  readonly text: string | null;
  readonly error: { code: string; message: string } | null;
  /** The item's compactions in order (issue 12 item 3): trigger, tokens before and after. */
  readonly compactions: readonly ItemCompaction[];
  /** Issue 11: earlier attempts interrupted after a mutating tool began (side effects may repeat). */
  readonly mayHaveRunTwice: readonly RepeatedSideEffect[];
}

export interface BatchTotals {
  readonly items: number;
  readonly succeeded: number;
  readonly failed: number;
  /** Not finished (the batch was interrupted); a resume runs them. */
  readonly pending: number;
  readonly turns: number;
  readonly usage: ItemUsage;
  readonly costUsd: number;
  readonly cacheReadShare: number;
  /** Compactions over all items. */
  readonly compactions: number;
  /** Issue 11: retried model requests over all items. */
  readonly apiRetries: number;
}

export interface BatchReport {
  readonly batchId: string;
  readonly wallMs: number;
  readonly totals: BatchTotals;
  readonly items: readonly ResultLine[];
  /** A BullMQ batch (issue 16 item 3): items run more than once, completions dropped as duplicates. */
  readonly queue?: {
    readonly url: string;
    readonly reExecutedItems: number;
    readonly duplicateExecutions: number;
  };
}

export const ZERO_USAGE: ItemUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 0,
};

export function addUsage(a: ItemUsage, b: ItemUsage): ItemUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
  };
}

export function toResultLine(state: ItemState): ResultLine {
  return {
    id: state.item.id,
    label: state.item.label,
    status: state.status === "running" ? "pending" : state.status,
    attempts: state.attempts,
    turns: state.result?.turns ?? 0,
    usage: state.result?.usage ?? ZERO_USAGE,
    costUsd: state.result?.costUsd ?? 0,
    durationMs: state.result?.durationMs ?? 0,
    apiRetries: state.result?.apiRetries ?? 0,
    terminal: state.result?.terminal ?? null,
    text: state.result?.text ?? null,
    error: state.error ?? null,
    compactions: state.result?.compactions ?? [],
    mayHaveRunTwice: state.mayHaveRunTwice ?? [],
  };
}

/** Pure: the report of a batch from its items' states. */
export function buildReport(batchId: string, states: readonly ItemState[], wallMs: number): BatchReport {
  const items = states.map(toResultLine);
  const usage = items.reduce((sum, line) => addUsage(sum, line.usage), ZERO_USAGE);
  const totals: BatchTotals = {
    items: items.length,
    succeeded: items.filter((line) => line.status === "succeeded").length,
    failed: items.filter((line) => line.status === "failed").length,
    pending: items.filter((line) => line.status === "pending").length,
    turns: items.reduce((sum, line) => sum + line.turns, 0),
    usage,
    costUsd: items.reduce((sum, line) => sum + line.costUsd, 0),
    cacheReadShare: cacheReadShare(usage),
    compactions: items.reduce((sum, line) => sum + line.compactions.length, 0),
    apiRetries: items.reduce((sum, line) => sum + line.apiRetries, 0),
  };
  return { batchId, wallMs, totals, items };
}

/** The progress line's last state: the report's totals, nothing running. */
export function finalSnapshot(report: BatchReport): ProgressSnapshot {
  const { totals } = report;
  return {
    total: totals.items,
    skipped: 0,
    succeeded: totals.succeeded,
    failed: totals.failed,
    running: 0,
    ...totals.usage,
    costUsd: totals.costUsd,
    elapsedMs: report.wallMs,
  };
}

/** Writes `results.jsonl`, `report.json` and `report.md` into `dir`; returns their paths. */

export interface WrittenReport {
  readonly results: string;
  readonly json: string;
  readonly markdown: string;
  /**
   * Issue 11: the `results.jsonl` already there held more finished items than this report (the
   * journal lost records): it was kept, and this report's results went to `results` instead.
   */
  readonly keptPrevious?: { readonly path: string; readonly finished: number };
}

/**
 * Writes `results.jsonl`, `report.json` and `report.md` into `dir`, each atomically (temp file,
 * fsync, rename: a crash or a full disk leaves the old file or the new one); returns their paths.
 * Issue 11: never replaces a `results.jsonl` that lists more finished items than this report.
 */
export async function writeReport(dir: string, report: BatchReport): Promise<WrittenReport> {
  await mkdir(dir, { recursive: true });
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
  await replaceAtomically(
    paths.json,
    `${JSON.stringify({ batchId: report.batchId, wallMs: report.wallMs, totals: report.totals, ...(report.queue ? { queue: report.queue } : {}) }, null, 2)}\n`,
  );
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

function usageCell(usage: ItemUsage): string {
  return `${formatCount(usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens)} / ${formatCount(usage.outputTokens)}`;
}

export function formatReportMarkdown(report: BatchReport): string {
  const lines = [
    `# Batch ${report.batchId}`,
    "",
    formatTotals(report),
    "",
    "| item | status | turns | tokens in / out | cache reads | compactions | cost | retries | error |",
    "|---|---|---|---|---|---|---|---|---|",
    ...report.items
      .map((line) =>
        [
          line.label,
          line.status,
          String(line.turns),
          usageCell(line.usage),
          formatCount(line.usage.cacheReadInputTokens),
          compactionsCell(line.compactions),
          `$${line.costUsd.toFixed(4)}`,
          String(line.apiRetries),
          line.error
            ? `${line.error.code}: ${line.error.message}`.replaceAll("|", "\\|").replaceAll("\n", " ")
            : "",
        ].join(" | "),
      )
      .map((row) => `| ${row} |`),
    ...repeatedSideEffects(report.items),
  ];
  return `${lines.join("\n")}\n`;
}

/** `2 (9.1k → 3.2k, 9.4k → 3.0k)`: how many, and what each did. */
function compactionsCell(compactions: readonly ItemCompaction[]): string {
  if (compactions.length === 0) return "0";
  const each = compactions.map((c) => `${formatCount(c.preTokens)} → ${formatCount(c.postTokens)}`);
  return `${compactions.length} (${each.join(", ")})`;
}

/**
 * Issue 11: items redone from scratch after an attempt was interrupted once a mutating tool had
 * begun — its edits or commands may have happened twice; listed so someone can check them.
 */
function repeatedSideEffects(items: readonly ResultLine[]): string[] {
  const repeated = items.filter((line) => line.mayHaveRunTwice.length > 0);
  if (repeated.length === 0) return [];
  return [
    "",
    "## May have run twice",
    "",
    "These items were interrupted after a tool that changes things had started, and were redone",
    "from scratch; check that their side effects are not doubled.",
    "",
    ...repeated.map(
      (line) =>
        `- ${line.label}: ${line.mayHaveRunTwice.map((repeat) => `attempt ${repeat.attempt} (${repeat.tool})`).join(", ")}`,
    ),
  ];
}

/** The totals paragraph printed at the end of a batch. */
export function formatTotals(report: BatchReport): string {
  const t = report.totals;
  const twice = report.items.filter((line) => line.mayHaveRunTwice.length > 0).length;
  return [
    `${plural(t.items, "item")}: ${t.succeeded} succeeded, ${t.failed} failed${t.pending > 0 ? `, ${t.pending} not finished` : ""}${twice > 0 ? ` · ${twice} may have run twice (see the report)` : ""}`,
    `${plural(t.turns, "turn")} · tokens ${usageCell(t.usage)} (in / out) · cache reads ${formatCount(t.usage.cacheReadInputTokens)} (${(t.cacheReadShare * 100).toFixed(1)}% of input) · cache writes ${formatCount(t.usage.cacheCreationInputTokens)}`,
    `cost $${t.costUsd.toFixed(4)}${t.compactions > 0 ? ` · ${plural(t.compactions, "compaction")}` : ""} · wall time ${formatDuration(report.wallMs)}${t.apiRetries > 0 ? ` · ${plural(t.apiRetries, "API retry", "API retries")}` : ""}`,
  ].join("\n");
}
