import { existsSync } from "node:fs";
import { type AppendLog, openLog, readLog } from "./append-log.js";

/**
 * R-B10: the durable record of a batch's Message Batches — `message-batches.log` beside the
 * journal, the same checksummed append-only log. Each round's batch id and its entries (which
 * item, which request) are written and fsync'd after the API accepted the batch and before it is
 * polled, so a killed run's `--resume` polls that batch and uses its answers instead of sending
 * the same requests again.
 */
export const MESSAGE_BATCHES_LOG = "message-batches.log";

export interface JournaledEntry {
  readonly customId: string;
  /** The batch item the request is from. */
  readonly item: string;
  /** sha256 of the request's params as sent (metadata left out): the same request, resent. */
  readonly digest: string;
}

export interface SentBatch {
  readonly kind: "sent";
  readonly batchId: string;
  readonly round: number;
  readonly at: string;
  readonly entries: readonly JournaledEntry[];
}

export interface EndedBatch {
  readonly kind: "ended";
  readonly batchId: string;
  readonly at: string;
}

export type BatchJournalRecord = SentBatch | EndedBatch;

export interface MessageBatchJournal {
  /** Every batch sent so far, this run's and earlier runs', in order. */
  readonly sent: readonly SentBatch[];
  /** Batch ids whose results were read to the end. */
  readonly ended: ReadonlySet<string>;
  record(record: BatchJournalRecord): Promise<void>;
  close(): Promise<void>;
}

/** Opens (or creates) the log at `path`; records that do not parse as ours are skipped. */
export async function openMessageBatchJournal(path: string): Promise<MessageBatchJournal> {
  const contents = existsSync(path)
    ? await readLog(path)
    : { records: [], validBytes: 0, tornTail: false, fileBytes: 0 };
  const sent: SentBatch[] = [];
  const ended = new Set<string>();
  for (const record of contents.records) {
    if (isSent(record)) sent.push(record);
    else if (isEnded(record)) ended.add(record.batchId);
  }
  const log: AppendLog = await openLog(path, contents);
  return {
    sent,
    ended,
    async record(record) {
      await log.append(record);
      if (record.kind === "sent") sent.push(record);
      else ended.add(record.batchId);
    },
    close: () => log.close(),
  };
}

/** A journal held in memory only (the library without a batch directory). */
export function memoryMessageBatchJournal(): MessageBatchJournal {
  const sent: SentBatch[] = [];
  const ended = new Set<string>();
  return {
    sent,
    ended,
    async record(record) {
      if (record.kind === "sent") sent.push(record);
      else ended.add(record.batchId);
    },
    async close() {},
  };
}

function isSent(value: unknown): value is SentBatch {
  const v = value as Partial<SentBatch> | null;
  return (
    v?.kind === "sent" &&
    typeof v.batchId === "string" &&
    typeof v.round === "number" &&
    Array.isArray(v.entries) &&
    v.entries.every(
      (e) => typeof e?.customId === "string" && typeof e.item === "string" && typeof e.digest === "string",
    )
  );
}

function isEnded(value: unknown): value is EndedBatch {
  const v = value as Partial<EndedBatch> | null;
  return v?.kind === "ended" && typeof v.batchId === "string";
}
