import { join } from "node:path";
import { sumUsage, type UsageTotals, ZERO_USAGE_TOTALS } from "@forkloop/loop-core";
import { TRANSCRIPT_EXTENSION } from "@forkloop/orchestrator";
import { REDUCE_ID, type ReduceRecord } from "./batch-reduce.js";
import type { ItemCompaction, ItemError, ItemState, RepeatedSideEffect } from "./job-backend.js";
import { plural } from "./plural.js";
import { cacheReadShare, formatCount, formatDuration, type ProgressSnapshot } from "./progress-display.js";

/** One line of `results.jsonl` (and a row of report.json): everything the report says about one item. */
export interface ResultLine {
  readonly id: string;
  readonly label: string;
  readonly status: ItemState["status"];
  readonly attempts: number;
  readonly turns: number;
  readonly usage: UsageTotals;
  readonly costUsd: number;
  /** R-B8: sent through the Message Batches API: the online price of the same tokens. */
  readonly onlineCostUsd?: number;
  readonly durationMs: number;
  /** R-R1, R-R2: model requests retried for this item (dropped streams, 529s, deadlines). */
  readonly apiRetries: number;
  readonly terminal: string | null;
  /** The item's answer: the sub-agent's final text. */
  readonly text: string | null;
  readonly error: ItemError | null;
  /** R-B6: with `--json-schema`, the item's answer as the validated object; null without. */
  readonly structured_output: unknown;
  /** R-B3: with isolation, the workspace paths the item's change wrote; null without isolation. */
  readonly applied: readonly string[] | null;
  /** The item's compactions in order (R-C4): trigger, tokens before and after. */
  readonly compactions: readonly ItemCompaction[];
  /** Earlier attempts interrupted after a mutating tool began (side effects may repeat). */
  readonly mayHaveRunTwice: readonly RepeatedSideEffect[];
  /** The last attempt's transcript (`forkloop replay <it>`), when the item ran. */
  readonly transcript: string | null;
}

export interface BatchTotals {
  readonly items: number;
  readonly succeeded: number;
  readonly failed: number;
  /** Not finished (the batch was interrupted); a resume runs them. */
  readonly pending: number;
  /** Turns, usage and cost: the items' and the reduce's (R-B7), all the batch spent. */
  readonly turns: number;
  readonly usage: UsageTotals;
  readonly costUsd: number;
  /** R-B8: the online price of the tokens of the items sent as Message Batches (absent otherwise). */
  readonly onlineCostUsd?: number;
  readonly cacheReadShare: number;
  /** Compactions over all items. */
  readonly compactions: number;
  /** R-R1: retried model requests over all items. */
  readonly apiRetries: number;
}

export interface BatchReport {
  readonly batchId: string;
  readonly wallMs: number;
  /** The embedded simulator answered: costs are what the tokens would cost, not a bill. */
  readonly simulated: boolean;
  readonly totals: BatchTotals;
  readonly items: readonly ResultLine[];
  /** R-B7: the reduce step's answer over the items' results: the batch's result (with `--reduce`). */
  readonly reduce?: ReduceLine;
  /** A BullMQ batch (R-B1): items run more than once, completions dropped as duplicates. */
  readonly queue?: {
    readonly url: string;
    readonly reExecutedItems: number;
    readonly duplicateExecutions: number;
    /** R-R10: settled runs seen, re-runs and dropped duplicates included (the totals count them all). */
    readonly runs?: number;
    /** R-R10: items whose result Redis lost after it was seen (a restart from an older snapshot). */
    readonly rolledBackItems?: number;
    /** R-R10: the batch's keys vanished from Redis before it finished. */
    readonly lost?: boolean;
  };
}

/** R-B7: the reduce as report.json, the summary and `batch status` show it. */
export interface ReduceLine {
  readonly prompt: string;
  /** `running`: started and not finished (interrupted); a resume runs it. */
  readonly status: ReduceRecord["status"];
  readonly attempts: number;
  /** How many items' results it read. */
  readonly items: number;
  readonly text: string | null;
  readonly error: ItemError | null;
  readonly turns: number;
  readonly usage: UsageTotals;
  readonly costUsd: number;
  readonly durationMs: number;
  readonly transcript: string | null;
}

export interface ReportOptions {
  readonly simulated?: boolean;
  /** Where item transcripts are (`<item-id>-<attempt>.fltr`). */
  readonly transcriptsDir?: string;
  /** R-B7: the batch's reduce record (reduce.json), when it has one. */
  readonly reduce?: ReduceRecord;
}

export function toReduceLine(record: ReduceRecord, transcriptsDir: string | undefined): ReduceLine {
  return {
    prompt: record.prompt,
    status: record.status,
    attempts: record.attempt,
    items: record.items,
    text: record.result?.text ?? null,
    error: record.error ?? null,
    turns: record.result?.turns ?? 0,
    usage: record.result?.usage ?? ZERO_USAGE_TOTALS,
    costUsd: record.result?.costUsd ?? 0,
    durationMs: record.result?.durationMs ?? 0,
    transcript:
      transcriptsDir === undefined
        ? null
        : join(transcriptsDir, `${REDUCE_ID}-${record.attempt}${TRANSCRIPT_EXTENSION}`),
  };
}

export function toResultLine(state: ItemState, transcriptsDir?: string): ResultLine {
  return {
    id: state.item.id,
    label: state.item.label,
    status: state.status === "running" ? "pending" : state.status,
    attempts: state.attempts,
    turns: state.result?.turns ?? 0,
    usage: state.result?.usage ?? ZERO_USAGE_TOTALS,
    costUsd: state.result?.costUsd ?? 0,
    ...(state.result?.onlineCostUsd === undefined ? {} : { onlineCostUsd: state.result.onlineCostUsd }),
    durationMs: state.result?.durationMs ?? 0,
    apiRetries: state.result?.apiRetries ?? 0,
    terminal: state.result?.terminal ?? null,
    text: state.result?.text ?? null,
    error: state.error ?? null,
    structured_output: state.result?.structuredOutput ?? null,
    applied: state.result?.applied ?? null,
    compactions: state.result?.compactions ?? [],
    mayHaveRunTwice: state.mayHaveRunTwice ?? [],
    transcript:
      transcriptsDir === undefined || state.attempts === 0
        ? null
        : join(transcriptsDir, `${state.item.id}-${state.attempts}${TRANSCRIPT_EXTENSION}`),
  };
}

/** Pure: the report of a batch from its items' states. */
export function buildReport(
  batchId: string,
  states: readonly ItemState[],
  wallMs: number,
  options: ReportOptions = {},
): BatchReport {
  const items = states.map((state) => toResultLine(state, options.transcriptsDir));
  const reduce =
    options.reduce === undefined ? undefined : toReduceLine(options.reduce, options.transcriptsDir);
  // The reduce is part of what the batch spent (R-B7): its turns, tokens and cost count in the
  // totals beside the items' (it runs online, so its online price is its price).
  const spent = [...items, ...(reduce === undefined ? [] : [reduce])];
  const usage = spent.reduce((sum, line) => sumUsage(sum, line.usage), ZERO_USAGE_TOTALS);
  const viaBatches = items.some((line) => line.onlineCostUsd !== undefined);
  const totals: BatchTotals = {
    items: items.length,
    succeeded: items.filter((line) => line.status === "succeeded").length,
    failed: items.filter((line) => line.status === "failed").length,
    pending: items.filter((line) => line.status === "pending").length,
    turns: spent.reduce((sum, line) => sum + line.turns, 0),
    usage,
    costUsd: spent.reduce((sum, line) => sum + line.costUsd, 0),
    // An item that ran online before a resume (or did not run) costs the same either way.
    ...(viaBatches
      ? {
          onlineCostUsd: spent.reduce(
            (sum, line) =>
              sum + ("onlineCostUsd" in line ? (line.onlineCostUsd ?? line.costUsd) : line.costUsd),
            0,
          ),
        }
      : {}),
    cacheReadShare: cacheReadShare(usage),
    compactions: items.reduce((sum, line) => sum + line.compactions.length, 0),
    apiRetries: items.reduce((sum, line) => sum + line.apiRetries, 0),
  };
  return {
    batchId,
    wallMs,
    simulated: options.simulated ?? false,
    totals,
    items,
    ...(reduce === undefined ? {} : { reduce }),
  };
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

/** `2 (9.1k → 3.2k, 9.4k → 3.0k)`: how many, and what each did. */
export function compactionsCell(compactions: readonly ItemCompaction[]): string {
  if (compactions.length === 0) return "0";
  const each = compactions.map((c) => `${formatCount(c.preTokens)} → ${formatCount(c.postTokens)}`);
  return `${compactions.length} (${each.join(", ")})`;
}

/** The totals paragraph printed at the end of a batch. */
export function formatTotals(report: BatchReport): string {
  const t = report.totals;
  const twice = report.items.filter((line) => line.mayHaveRunTwice.length > 0).length;
  const conflicts = report.items.filter((line) => line.error?.code === "conflict").length;
  return [
    `${plural(t.items, "item")}: ${t.succeeded} succeeded, ${t.failed} failed${conflicts > 0 ? ` (${plural(conflicts, "conflict")}: diffs kept, see the report)` : ""}${t.pending > 0 ? `, ${t.pending} not finished` : ""}${twice > 0 ? ` · ${twice} may have run twice (see the report)` : ""}`,
    `${plural(t.turns, "turn")} · tokens ${tokensCell(t.usage)} (in / out) · cache reads ${formatCount(t.usage.cacheReadInputTokens)} (${(t.cacheReadShare * 100).toFixed(1)}% of input) · cache writes ${formatCount(t.usage.cacheCreationInputTokens)}`,
    `cost $${t.costUsd.toFixed(4)}${report.simulated ? " (simulated)" : ""}${savingNote(t)}${t.compactions > 0 ? ` · ${plural(t.compactions, "compaction")}` : ""} · wall time ${formatDuration(report.wallMs)}${t.apiRetries > 0 ? ` · ${plural(t.apiRetries, "API retry", "API retries")}` : ""}`,
  ].join("\n");
}

/** R-B8: ` at Message Batches prices — online $X, saved $Y (Z%)`, when the batch used them. */
function savingNote(totals: Pick<BatchTotals, "costUsd" | "onlineCostUsd">): string {
  const online = totals.onlineCostUsd;
  if (online === undefined) return "";
  const saved = online - totals.costUsd;
  const share = online > 0 ? ` (${((saved / online) * 100).toFixed(0)}%)` : "";
  return ` at Message Batches prices — online $${online.toFixed(4)}, saved $${saved.toFixed(4)}${share}`;
}

/** Prompt tokens (uncached + cache writes + cache reads) / output tokens, e.g. `3.2k / 120`. */
export function tokensCell(usage: UsageTotals): string {
  return `${formatCount(usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens)} / ${formatCount(usage.outputTokens)}`;
}
