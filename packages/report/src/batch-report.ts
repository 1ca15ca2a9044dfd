import { access } from "node:fs/promises";
import { buildAgentView } from "./agent-view.js";
import { TextBudget } from "./message-view.js";
import { readShownTranscript } from "./read-transcript.js";
import type { BatchItemRow, BatchReduceView, BatchReportData } from "./report-data.js";

/**
 * What a batch report is made from, handed over by whoever owns the batch's journal (the CLI
 * today; the batch package later): per item, the figures of its last attempt (as `results.jsonl`
 * has them), the times of every attempt, and where its sub-agent transcript is.
 */
export interface BatchReportInput {
  readonly batchId: string;
  readonly model?: string;
  readonly prompt?: string;
  readonly items: readonly BatchItemInput[];
  /** R-B7: the reduce step (results.jsonl's sibling reduce.json, as report.json has it). */
  readonly reduce?: BatchReduceInput;
}

/** The reduce as report.json has it: the view's fields, with its usage as loop-core counts it. */
export type BatchReduceInput = Omit<BatchReduceView, "tokens"> & { readonly usage: BatchItemInput["usage"] };

export interface BatchItemInput {
  readonly id: string;
  readonly label: string;
  readonly status: "pending" | "succeeded" | "failed";
  readonly attempts: number;
  readonly turns: number;
  readonly usage: {
    readonly inputTokens: number;
    readonly outputTokens: number;
    readonly cacheCreationInputTokens: number;
    readonly cacheReadInputTokens: number;
    /** Model requests answered (an older results.jsonl has none: 0). */
    readonly apiCalls?: number;
  };
  readonly costUsd: number;
  readonly durationMs: number;
  readonly terminal: string | null;
  readonly text: string | null;
  /** R-B6: the item's validated structured output (results.jsonl's), null or absent without one. */
  readonly structured_output?: unknown;
  readonly error: { readonly code: string; readonly message: string } | null;
  /** Every attempt: claimed at, settled (or last heard of) at, epoch ms. */
  readonly runs: readonly { readonly startedAt: number; readonly endedAt: number | null }[];
  /** The last attempt's sub-agent transcript, when it has one. */
  readonly transcriptPath?: string;
  /** The item's compactions as the journal has them (results.jsonl); else counted in its transcript. */
  readonly compactions?: readonly unknown[];
  /** Model requests retried on the way (dropped streams, 529s, deadlines; R-R1, R-R2). */
  readonly apiRetries?: number;
}

/** Message text of all items together (characters): 10,000 items still make a page. */
const BATCH_TEXT_BUDGET = 4_000_000;
const MIN_ITEM_TEXT = 600;
const ANSWER_PREVIEW = 240;

function preview(text: string): string {
  return text.length > ANSWER_PREVIEW ? `${text.slice(0, ANSWER_PREVIEW)}…` : text;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Overlapping pauses (several workers met the same 429 window) drawn as one. */
function mergePauses(pauses: readonly { at: number; until: number }[]): { at: number; until: number }[] {
  const merged: { at: number; until: number }[] = [];
  for (const pause of [...pauses].sort((a, b) => a.at - b.at)) {
    const last = merged.at(-1);
    if (last && pause.at <= last.until) last.until = Math.max(last.until, pause.until);
    else merged.push({ ...pause });
  }
  return merged;
}

/** Reads every item's transcript (few at a time) and builds the batch page's data. */
export async function loadBatchReport(input: BatchReportInput): Promise<BatchReportData> {
  const perItem = Math.max(MIN_ITEM_TEXT, Math.floor(BATCH_TEXT_BUDGET / Math.max(1, input.items.length)));
  const items: BatchItemRow[] = new Array(input.items.length);
  let next = 0;
  const worker = async () => {
    while (next < input.items.length) {
      const index = next++;
      items[index] = await itemRow(input.items[index]!, perItem);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  // Reduced, not spread: 10,000 items have 20,000 times, too many arguments for Math.min.
  const runs = items.flatMap((item) => item.runs);
  const first = runs.reduce((min, run) => Math.min(min, run.startedAt), Number.POSITIVE_INFINITY);
  const last = runs.reduce(
    (max, run) => Math.max(max, run.endedAt ?? run.startedAt),
    Number.NEGATIVE_INFINITY,
  );
  return {
    kind: "batch",
    generatedAt: new Date().toISOString(),
    batchId: input.batchId,
    model: input.model ?? null,
    prompt: input.prompt ?? null,
    wallMs: runs.length === 0 ? 0 : last - first,
    items,
    pauses: mergePauses(items.flatMap((item) => item.session?.rateLimits ?? [])),
    reduce: input.reduce === undefined ? null : reduceView(input.reduce),
  };
}

function reduceView(reduce: BatchReduceInput): BatchReduceView {
  const { prompt, status, items, text, error, turns, costUsd } = reduce;
  return { prompt, status, items, text, error, turns, tokens: tokensOf(reduce.usage), costUsd };
}

function tokensOf(usage: BatchItemInput["usage"]): BatchItemRow["tokens"] {
  return {
    input: usage.inputTokens,
    cacheWrite: usage.cacheCreationInputTokens,
    cacheRead: usage.cacheReadInputTokens,
    output: usage.outputTokens,
  };
}

async function itemRow(item: BatchItemInput, textBudget: number): Promise<BatchItemRow> {
  let session: BatchItemRow["session"] = null;
  if (item.transcriptPath !== undefined && (await exists(item.transcriptPath))) {
    const loaded = await readShownTranscript(item.transcriptPath);
    session = buildAgentView(loaded.records, {
      budget: new TextBudget(textBudget),
      torn: loaded.torn,
      ...(loaded.problem === undefined ? {} : { damage: loaded.problem }),
      label: item.label,
    }).view;
  }
  const text = item.text ?? "";
  return {
    id: item.id,
    label: item.label,
    status: item.status,
    attempts: item.attempts,
    turns: item.turns,
    tokens: tokensOf(item.usage),
    costUsd: item.costUsd,
    durationMs: item.durationMs,
    compactions:
      item.compactions?.length ??
      session?.markers.filter((marker) => marker.kind === "compact_boundary").length ??
      0,
    apiCalls: item.usage.apiCalls ?? 0,
    apiRetries: item.apiRetries ?? 0,
    terminal: item.terminal,
    answer: preview(text),
    structuredOutput:
      item.structured_output === undefined || item.structured_output === null
        ? null
        : preview(JSON.stringify(item.structured_output)),
    error: item.error,
    runs: item.runs,
    session,
  };
}
