import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ItemCompaction, ItemState, ItemUsage } from "./job-backend.js";
import { plural } from "./plural.js";
import { cacheReadShare, formatCount, formatDuration } from "./progress-display.js";

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
  readonly terminal: string | null;
  readonly text: string | null;
  readonly error: { code: string; message: string } | null;
  /** The item's compactions in order (issue 12 item 3): trigger, tokens before and after. */
  readonly compactions: readonly ItemCompaction[];
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
}

export interface BatchReport {
  readonly batchId: string;
  readonly wallMs: number;
  readonly totals: BatchTotals;
  readonly items: readonly ResultLine[];
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
    terminal: state.result?.terminal ?? null,
    text: state.result?.text ?? null,
    error: state.error ?? null,
    compactions: state.result?.compactions ?? [],
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
  };
  return { batchId, wallMs, totals, items };
}

/** Writes `results.jsonl`, `report.json` and `report.md` into `dir`; returns their paths. */
export async function writeReport(
  dir: string,
  report: BatchReport,
): Promise<{ results: string; json: string; markdown: string }> {
  await mkdir(dir, { recursive: true });
  const paths = {
    results: join(dir, "results.jsonl"),
    json: join(dir, "report.json"),
    markdown: join(dir, "report.md"),
  };
  await writeFile(paths.results, report.items.map((line) => `${JSON.stringify(line)}\n`).join(""));
  await writeFile(
    paths.json,
    `${JSON.stringify({ batchId: report.batchId, wallMs: report.wallMs, totals: report.totals }, null, 2)}\n`,
  );
  await writeFile(paths.markdown, formatReportMarkdown(report));
  return paths;
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
    "| item | status | turns | tokens in / out | cache reads | compactions | cost | error |",
    "|---|---|---|---|---|---|---|---|",
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
          line.error
            ? `${line.error.code}: ${line.error.message}`.replaceAll("|", "\\|").replaceAll("\n", " ")
            : "",
        ].join(" | "),
      )
      .map((row) => `| ${row} |`),
  ];
  return `${lines.join("\n")}\n`;
}

/** `2 (9.1k → 3.2k, 9.4k → 3.0k)`: how many, and what each did. */
function compactionsCell(compactions: readonly ItemCompaction[]): string {
  if (compactions.length === 0) return "0";
  const each = compactions.map((c) => `${formatCount(c.preTokens)} → ${formatCount(c.postTokens)}`);
  return `${compactions.length} (${each.join(", ")})`;
}

/** The totals paragraph printed at the end of a batch. */
export function formatTotals(report: BatchReport): string {
  const t = report.totals;
  return [
    `${plural(t.items, "item")}: ${t.succeeded} succeeded, ${t.failed} failed${t.pending > 0 ? `, ${t.pending} not finished` : ""}`,
    `${plural(t.turns, "turn")} · tokens ${usageCell(t.usage)} (in / out) · cache reads ${formatCount(t.usage.cacheReadInputTokens)} (${(t.cacheReadShare * 100).toFixed(1)}% of input) · cache writes ${formatCount(t.usage.cacheCreationInputTokens)}`,
    `cost $${t.costUsd.toFixed(4)}${t.compactions > 0 ? ` · ${plural(t.compactions, "compaction")}` : ""} · wall time ${formatDuration(report.wallMs)}`,
  ].join("\n");
}
