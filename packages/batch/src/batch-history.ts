import { join } from "node:path";
import { readReduce } from "./batch-reduce.js";
import { type ReduceLine, type ResultLine, toReduceLine, toResultLine } from "./batch-report.js";
import type { BatchSpec } from "./batch-store.js";
import { type JournalRecord, readJournal, replayJournal } from "./local-journal-backend.js";
import { itemTranscriptName } from "./pool-executor.js";

/** One attempt of an item: claimed, until settled or its last heartbeat (null: none yet). */
export interface AttemptRun {
  readonly startedAt: number;
  readonly endedAt: number | null;
}

/** An item's result line (a running one counts as pending), its attempts' times and last transcript. */
export type ItemHistory = Omit<ResultLine, "status"> & {
  readonly status: Exclude<ResultLine["status"], "running">;
  readonly runs: readonly AttemptRun[];
  readonly transcriptPath?: string;
};

/** A local batch as its journal tells it: what `forkloop report <batch-id>` renders (R-V1). */
export interface BatchHistory {
  readonly batchId: string;
  readonly model: string;
  readonly prompt: string;
  readonly items: readonly ItemHistory[];
  /** R-B7: the reduce, as report.json has it. */
  readonly reduce?: ReduceLine;
}

/** Every attempt of every item: claimed → settled, or → its last heartbeat if it never settled. */
function attemptRuns(records: readonly JournalRecord[]): Map<string, AttemptRun[]> {
  const attempts = new Map<string, Map<number, { startedAt: number; endedAt: number | null }>>();
  for (const record of records) {
    if (record.type === "enqueued" || record.type === "applying_group") continue;
    const at = Date.parse(record.at);
    const byAttempt =
      attempts.get(record.id) ?? new Map<number, { startedAt: number; endedAt: number | null }>();
    attempts.set(record.id, byAttempt);
    const run = byAttempt.get(record.attempt);
    if (record.type === "claimed") byAttempt.set(record.attempt, { startedAt: at, endedAt: null });
    // Records are in time order: a heartbeat moves an unsettled attempt's end, a settle fixes it.
    else if (run) run.endedAt = at;
  }
  return new Map([...attempts].map(([id, runs]) => [id, [...runs.values()]]));
}

/**
 * The journal's replay (the same lines as results.jsonl), each attempt's times, each item's last
 * transcript, and the reduce (R-B7).
 */
export async function batchHistory(spec: BatchSpec, dir: string): Promise<BatchHistory> {
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
