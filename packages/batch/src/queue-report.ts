import { sumUsage, type UsageTotals, ZERO_USAGE_TOTALS } from "@forkloop/loop-core";
import type { ReduceRecord } from "./batch-reduce.js";
import { type BatchReport, buildReport, toReduceLine } from "./batch-report.js";
import { cacheReadShare } from "./progress-display.js";
import type { QueuedRunSummary } from "./queue-producer.js";

/**
 * A queued batch's report (R-B1, R-R10). The totals count what ran, not what Redis
 * kept: every settled run the producer saw — a re-run after a stall, a completion dropped as a
 * duplicate, a failed attempt BullMQ retried, a run whose result a Redis rollback erased — is
 * in the tokens, API calls and cost. An item with no run record (a worker from before runs were
 * recorded) counts its result.
 */
export function queuedBatchReport(
  batchId: string,
  summary: QueuedRunSummary,
  url: string,
  reduce?: ReduceRecord,
  /** R-B7: where this host's reduce transcripts are, when the reduce's is among them. */
  reduceTranscriptsDir?: string,
): BatchReport {
  const built = buildReport(batchId, summary.states, summary.wallMs, reduce === undefined ? {} : { reduce });
  // Item transcripts stay on the host whose worker ran the item; the reduce's is on its producer's.
  const report =
    built.reduce === undefined || reduce === undefined || reduceTranscriptsDir === undefined
      ? built
      : {
          ...built,
          reduce: { ...built.reduce, transcript: toReduceLine(reduce, reduceTranscriptsDir).transcript },
        };
  const spentByItem = new Map<string, { usage: UsageTotals; costUsd: number }>();
  for (const run of summary.runs) {
    const spent = spentByItem.get(run.itemId) ?? { usage: ZERO_USAGE_TOTALS, costUsd: 0 };
    spentByItem.set(run.itemId, {
      usage: sumUsage(spent.usage, run.usage),
      costUsd: spent.costUsd + run.costUsd,
    });
  }
  // R-B7: the reduce (run by the producer) is part of what the batch spent.
  let usage = report.reduce?.usage ?? ZERO_USAGE_TOTALS;
  let costUsd = report.reduce?.costUsd ?? 0;
  for (const line of report.items) {
    const spent = spentByItem.get(line.id) ?? line;
    usage = sumUsage(usage, spent.usage);
    costUsd += spent.costUsd;
  }
  return {
    ...report,
    totals: { ...report.totals, usage, costUsd, cacheReadShare: cacheReadShare(usage) },
    queue: {
      url,
      reExecutedItems: summary.states.filter((state) => state.attempts > 1).length,
      duplicateExecutions: summary.duplicateExecutions,
      runs: summary.runs.length,
      rolledBackItems: summary.rolledBackItems,
      ...(summary.lost ? { lost: true } : {}),
    },
  };
}
