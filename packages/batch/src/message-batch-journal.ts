import { existsSync } from "node:fs";
import { type AppendLog, openLog, readLog } from "./append-log.js";

/**
 * R-B10: the durable record of a batch's Message Batches — `message-batches.log` beside the
 * journal, the same checksummed append-only log. Each round's entries (which item, which request,
 * under which custom id) are written before the batch is created ("sending"), and its batch id
 * after the API accepted it and before it is polled ("sent"), each fsync'd. A killed run's
 * `--resume` polls a sent batch and uses its answers instead of sending the same requests again;
 * a round killed between the two records is looked for among the endpoint's batches.
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

/** A round about to be created: its batch id is not known yet. */
export interface SendingBatch {
  readonly kind: "sending";
  readonly round: number;
  readonly at: string;
  readonly entries: readonly JournaledEntry[];
}

/** A round whose create the API refused: no batch holds its entries. */
export interface UnsentBatch {
  readonly kind: "unsent";
  /** The first custom id of its "sending" record. */
  readonly customId: string;
}

export interface EndedBatch {
  readonly kind: "ended";
  readonly batchId: string;
  readonly at: string;
}

export type BatchJournalRecord = SendingBatch | SentBatch | UnsentBatch | EndedBatch;

export interface MessageBatchJournal {
  /** Every batch sent so far, this run's and earlier runs', in order. */
  readonly sent: readonly SentBatch[];
  /** Batch ids whose results were read to the end. */
  readonly ended: ReadonlySet<string>;
  /** Rounds recorded as sending whose batch id never was: a run died between the two records. */
  unconfirmed(): SendingBatch[];
  record(record: BatchJournalRecord): Promise<void>;
  close(): Promise<void>;
}

/** Opens (or creates) the log at `path`; records that do not parse as ours are skipped. */
export async function openMessageBatchJournal(path: string): Promise<MessageBatchJournal> {
  const contents = existsSync(path)
    ? await readLog(path)
    : { records: [], validBytes: 0, tornTail: false, fileBytes: 0 };
  const journal = journalIn();
  for (const record of contents.records) {
    if (isSending(record) || isSent(record) || isUnsent(record) || isEnded(record)) journal.remember(record);
  }
  const log: AppendLog = await openLog(path, contents);
  return {
    ...journal.view,
    async record(record) {
      await log.append(record);
      journal.remember(record);
    },
    close: () => log.close(),
  };
}

/** The journal's state as its records make it. */
function journalIn() {
  const sent: SentBatch[] = [];
  const ended = new Set<string>();
  const sending: SendingBatch[] = [];
  const unsent = new Set<string>();
  return {
    view: {
      sent,
      ended,
      unconfirmed: () => {
        const settled = new Set([
          ...unsent,
          ...sent.flatMap((batch) => batch.entries.map((e) => e.customId)),
        ]);
        return sending.filter((round) => !round.entries.some((e) => settled.has(e.customId)));
      },
    },
    remember(record: BatchJournalRecord): void {
      if (record.kind === "sending") sending.push(record);
      else if (record.kind === "sent") sent.push(record);
      else if (record.kind === "unsent") unsent.add(record.customId);
      else ended.add(record.batchId);
    },
  };
}

function isSending(value: unknown): value is SendingBatch {
  const v = value as Partial<SendingBatch> | null;
  return (
    v?.kind === "sending" && typeof v.round === "number" && typeof v.at === "string" && entriesOk(v.entries)
  );
}

function isSent(value: unknown): value is SentBatch {
  const v = value as Partial<SentBatch> | null;
  return (
    v?.kind === "sent" && typeof v.batchId === "string" && typeof v.round === "number" && entriesOk(v.entries)
  );
}

function entriesOk(entries: unknown): entries is JournaledEntry[] {
  return (
    Array.isArray(entries) &&
    entries.every(
      (e) => typeof e?.customId === "string" && typeof e.item === "string" && typeof e.digest === "string",
    )
  );
}

function isUnsent(value: unknown): value is UnsentBatch {
  const v = value as Partial<UnsentBatch> | null;
  return v?.kind === "unsent" && typeof v.customId === "string";
}

function isEnded(value: unknown): value is EndedBatch {
  const v = value as Partial<EndedBatch> | null;
  return v?.kind === "ended" && typeof v.batchId === "string";
}
