import { join } from "node:path";
import type { BatchSpec } from "@forkloop/batch";
import {
  itemTranscriptName,
  type JournalRecord,
  readJournal,
  readReduce,
  replayJournal,
  toReduceLine,
  toResultLine,
} from "@forkloop/batch";
import type { BatchReportInput } from "@forkloop/report";

type Run = { startedAt: number; endedAt: number | null };

/** Every attempt of every item: claimed → settled, or → its last heartbeat if it never settled. */
export function attemptRuns(records: readonly JournalRecord[]): Map<string, Run[]> {
  const attempts = new Map<string, Map<number, Run>>();
  for (const record of records) {
    if (record.type === "enqueued") continue;
    const at = Date.parse(record.at);
    const byAttempt = attempts.get(record.id) ?? new Map<number, Run>();
    attempts.set(record.id, byAttempt);
    const run = byAttempt.get(record.attempt);
    if (record.type === "claimed") byAttempt.set(record.attempt, { startedAt: at, endedAt: null });
    // Records are in time order: a heartbeat moves an unsettled attempt's end, a settle fixes it.
    else if (run) run.endedAt = at;
  }
  return new Map([...attempts].map(([id, runs]) => [id, [...runs.values()]]));
}

/**
 * What `forkloop report <batch-id>` hands the report package: the journal's replay (the same
 * lines as results.jsonl), each attempt's times, each item's last transcript, and the reduce (R-B7).
 */
export async function batchReportInput(spec: BatchSpec, dir: string): Promise<BatchReportInput> {
  const { records } = await readJournal(dir);
  const { items } = replayJournal(records);
  const runs = attemptRuns(records);
  const reduce = await readReduce(dir);
  return {
    batchId: spec.id,
    model: spec.model,
    prompt: spec.prompt,
    items: items.map((state) => {
      const line = toResultLine(state);
      return {
        ...line,
        status: line.status === "running" ? "pending" : line.status,
        runs: runs.get(state.item.id) ?? [],
        ...(state.attempts === 0
          ? {}
          : { transcriptPath: join(dir, "transcripts", itemTranscriptName(state.item.id, state.attempts)) }),
      };
    }),
    ...(reduce === undefined ? {} : { reduce: toReduceLine(reduce, undefined) }),
  };
}
