import { closeSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { open, readFile, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import type {
  CacheSafeParams,
  LoopEvent,
  Message,
  RequestPrefix,
  TerminalReason,
  UsageTotals,
} from "@forkloop/loop-core";
import { OrchestratorError } from "./errors.js";
import type { StartedFork } from "./pool-compact-runner.js";
import { TranscriptFold } from "./transcript-fold.js";
import {
  decodeRecords,
  encodeRecord,
  RECORD_HEADER_BYTES,
  readFrameAt,
  type TranscriptDamage,
} from "./transcript-format.js";

/** The context lines of R-C7 a session ran with (its model's window, model overrides included). */
export interface ContextLimits {
  readonly contextWindow: number;
  readonly autoCompact: number;
  readonly blockingLimit: number;
}

/** File name suffix of a transcript (msgpack records, see transcript-format.ts). */
export const TRANSCRIPT_EXTENSION = ".fltr";

/**
 * R-R12: the record format. 1 wrote the whole CacheSafeParams after every turn; 2 writes its
 * cache-key part once per change (`request_prefix`) and a `fork_point` per turn. Readers read
 * both (transcript-fold.ts); a transcript whose `session_start.format` is newer is refused.
 */
export const TRANSCRIPT_FORMAT = 2;

/** One record of a transcript. Messages link to their parent by `parentUuid`; sessions by `parent`. */
export type TranscriptRecord =
  | {
      readonly type: "session_start";
      readonly sessionId: string;
      readonly agentId: string;
      readonly cwd: string;
      readonly model: string;
      readonly querySource: string;
      readonly createdAt: string;
      /** Set for a sub-agent: the session and tool call that forked it. */
      readonly parent?: { readonly sessionId: string; readonly agentId: string; readonly toolUseId?: string };
      /** The model's context lines at the start (R-C7), for reports; absent in older transcripts. */
      readonly limits?: ContextLimits;
      /** R-R12: the record format (`TRANSCRIPT_FORMAT`); absent = 1. */
      readonly format?: number;
      /** R-R13: a sub-agent's usable tools and turn limit, so a resume can continue it as it was. */
      readonly toolNames?: readonly string[];
      readonly maxTurns?: number;
    }
  | { readonly type: "message"; readonly message: Message }
  /** The whole history replaced at once (after a compaction): loaders restart from these. */
  | { readonly type: "history"; readonly messages: readonly Message[] }
  /** Format 1 (and a fork point that cannot be one, below): the whole CacheSafeParams. */
  | { readonly type: "cache_safe_params"; readonly params: CacheSafeParams }
  /** R-R12: the cache-key part of the request prefix, written when it changes. */
  | { readonly type: "request_prefix"; readonly prefix: RequestPrefix }
  /**
   * R-R12: the latest CacheSafeParams are the last `request_prefix` + the first `messageCount`
   * messages of the history as the records so far build it (the last of them `lastUuid`).
   */
  | { readonly type: "fork_point"; readonly messageCount: number; readonly lastUuid: string | null }
  | {
      readonly type: "sub_agent";
      readonly agentId: string;
      readonly transcriptPath: string;
      readonly querySource: string;
    }
  | {
      readonly type: "transition";
      readonly turnCount: number;
      readonly transition: string | undefined;
      readonly messageCount: number;
    }
  /**
   * One model request, for reports (R-V1; absent in older transcripts): when it started, its
   * first token, its end, the retries inside it, and how it ended — `reply` (the assistant
   * message `messageUuid`), `api_error`, `withheld` (replaced by a recovery attempt), `fallback`
   * (abandoned for `fallbackTo`) or `aborted`.
   */
  | {
      readonly type: "request";
      readonly model: string;
      readonly querySource: string;
      readonly startedAt: string;
      readonly firstTokenAt?: string;
      readonly endedAt: string;
      readonly outcome: "reply" | "api_error" | "withheld" | "fallback" | "aborted";
      readonly messageUuid?: string;
      readonly retries: readonly {
        readonly at: string;
        readonly attempt: number;
        readonly delayMs: number;
        readonly error: string;
      }[];
      readonly fallbackTo?: string;
      readonly costUsd?: number;
    }
  /** A tool call began (its PreToolUse point); it ends with its tool_result message. */
  | { readonly type: "tool_started"; readonly toolUseId: string; readonly name: string; readonly at: string }
  /** A 429 paused the whole pool until `until` (sub-agents in the worker pool). */
  | {
      readonly type: "rate_limited";
      readonly at: string;
      readonly retryAfterMs: number;
      readonly until: string;
    }
  | {
      readonly type: "terminal";
      readonly reason: TerminalReason;
      readonly turnCount: number;
      readonly usage: UsageTotals;
      readonly costUsd: number;
      readonly endedAt: string;
    };

export interface TranscriptWriterOptions {
  /** fsync after every record (slower; survives power loss, not just a killed process). */
  readonly fsync?: boolean;
  /**
   * R-R12: the file as `readTranscript` just read it (its intact length and fold): the writer
   * appends after it without reading the whole file a second time.
   */
  readonly existing?: ReadTranscript;
  /** The write call (a seam: tests inject a full disk). Default `fs.writeSync`. */
  readonly writeSync?: (fd: number, buffer: Buffer, offset: number) => number;
}

/**
 * Appends records to a transcript as they happen. Writes are synchronous so their order on disk
 * is the order of calls and a kill can tear only the last record. Opening an existing file
 * first cuts a torn tail, so a resumed session appends after the last good record.
 */
export class TranscriptWriter {
  readonly path: string;
  #fd: number | null;
  readonly #fsync: boolean;
  readonly #write: (fd: number, buffer: Buffer, offset: number) => number;
  #records = 0;
  /** Bytes of whole records: a failed write is cut back to here, never left half-written. */
  #length = 0;
  /** What the file says so far (R-R12: which messages a fork point can name). */
  readonly #fold: TranscriptFold;
  /** The last `request_prefix` written, as JSON (R-R12: written again only when it changes). */
  #prefixKey: string | undefined;

  constructor(path: string, options: TranscriptWriterOptions = {}) {
    this.path = path;
    this.#fsync = options.fsync ?? false;
    this.#write = options.writeSync ?? ((fd, buffer, offset) => writeSync(fd, buffer, offset));
    // R-S13: transcripts hold file contents: the owner's alone.
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.#fd = openSync(path, "a+", 0o600);
    const existing = options.existing ?? readExistingSync(path, () => this.close());
    if (existing.torn) ftruncateSync(this.#fd, existing.validLength);
    this.#fold = existing.fold;
    this.#records = existing.fold.recordCount;
    this.#length = existing.validLength;
    this.#prefixKey = existing.fold.prefix === undefined ? undefined : JSON.stringify(existing.fold.prefix);
  }

  /** Number of records in the file (including those written before this writer opened it). */
  get recordCount(): number {
    return this.#records;
  }

  /**
   * Writes one record; returns only once every byte was written (a short write is continued).
   * R-R4: a failed write (ENOSPC, EIO, EROFS) is cut back off the file, so a later append or
   * resume never follows a half record, and thrown as `transcript_write_failed` naming the path.
   */
  append(record: TranscriptRecord): void {
    if (this.#fd === null) throw new OrchestratorError("internal", `transcript ${this.path} is closed`);
    const frame = encodeRecord(record);
    try {
      let written = 0;
      while (written < frame.length) written += this.#write(this.#fd, frame, written);
      if (this.#fsync) fsyncSync(this.#fd);
    } catch (error) {
      try {
        ftruncateSync(this.#fd, this.#length);
      } catch {
        // The cut failed too (a read-only remount): the next open drops the torn tail.
      }
      const code = (error as NodeJS.ErrnoException).code ?? "EIO";
      throw new OrchestratorError(
        "transcript_write_failed",
        `cannot write the transcript ${this.path}: ${(error as Error).message}`,
        { path: this.path, errno: code },
      );
    }
    this.#length += frame.length;
    this.#records++;
    this.#fold.add(record);
  }

  /** Names a sub-agent's transcript (a fork of this agent), so a report can draw the fork tree. */
  linkSubAgent(fork: StartedFork): void {
    if (fork.transcriptPath === undefined) return;
    this.append({
      type: "sub_agent",
      agentId: fork.id,
      transcriptPath: fork.transcriptPath,
      querySource: fork.querySource,
    });
  }

  /**
   * R-R12: saves the latest CacheSafeParams without copying the conversation into the file once
   * per turn: the cache-key part is written when it changes (`request_prefix`), the messages as a
   * `fork_point` naming how many of the history's messages the prefix holds. Messages that are
   * not the history's own (a caller's edited copy) are written whole, as format 1 did.
   */
  appendCacheSafeParams(params: CacheSafeParams): void {
    const { forkContextMessages, ...prefix } = params;
    const key = JSON.stringify(prefix);
    if (!startsWithHistory(forkContextMessages, this.#fold)) {
      this.append({ type: "cache_safe_params", params });
      return;
    }
    if (key !== this.#prefixKey) {
      this.append({ type: "request_prefix", prefix });
      this.#prefixKey = key;
    }
    this.append({
      type: "fork_point",
      messageCount: forkContextMessages.length,
      lastUuid: forkContextMessages.at(-1)?.uuid ?? null,
    });
  }

  /** R-R12: records the cache-key part of a request prefix once (a sub-agent's own prefix). */
  appendRequestPrefix(prefix: RequestPrefix): void {
    const key = JSON.stringify(prefix);
    if (key === this.#prefixKey) return;
    this.append({ type: "request_prefix", prefix });
    this.#prefixKey = key;
  }

  /**
   * Records what a transcript keeps of a loop event: messages, a replaced history (at once: a
   * resume after a failed or interrupted request still starts from the compacted history) and
   * state transitions (R-L5).
   */
  appendLoopEvent(event: LoopEvent): void {
    if (event.type === "user" || event.type === "assistant" || event.type === "system") {
      this.append({ type: "message", message: event as Message });
    } else if (event.type === "history_replaced") {
      this.append({ type: "history", messages: event.messages });
    } else if (event.type === "state_snapshot") {
      this.append({
        type: "transition",
        turnCount: event.turnCount,
        transition: event.transition,
        messageCount: event.messageCount,
      });
    }
  }

  appendMessages(messages: readonly Message[]): void {
    for (const message of messages) this.append({ type: "message", message });
  }

  close(): void {
    if (this.#fd === null) return;
    closeSync(this.#fd);
    this.#fd = null;
  }
}

export interface LoadedTranscript {
  /** The conversation to resume from: every message record, with compaction applied. */
  readonly messages: Message[];
  /** True when a torn or corrupt tail record was dropped. */
  readonly torn: boolean;
  readonly records: TranscriptRecord[];
  readonly start: Extract<TranscriptRecord, { type: "session_start" }> | undefined;
  /** The latest saved CacheSafeParams (R-F3), for post-resume forks. */
  readonly cacheSafeParams: CacheSafeParams | undefined;
  readonly terminal: Extract<TranscriptRecord, { type: "terminal" }> | undefined;
}

/**
 * Loads a transcript with every record (for reports and replay). Messages are de-duplicated by
 * uuid (a resumed session may re-append history); a `history` record (written after a
 * compaction) replaces everything before it, because the compact summary stands for it.
 */
export async function loadTranscript(path: string): Promise<LoadedTranscript> {
  const bytes = await readFile(path);
  const decoded = decodeRecords(bytes);
  if (decoded.damage) throw transcriptDamaged(path, decoded.damage, bytes.length);
  return fromRecords(path, decoded.records as TranscriptRecord[], decoded.torn);
}

function fromRecords(path: string, records: TranscriptRecord[], torn: boolean): LoadedTranscript {
  const fold = foldRecords(path, records);
  return {
    messages: [...fold.messages()],
    torn,
    records,
    start: fold.start,
    cacheSafeParams: fold.cacheSafeParams(),
    terminal: fold.terminal,
  };
}

function foldRecords(path: string, records: readonly TranscriptRecord[]): TranscriptFold {
  const fold = new TranscriptFold(path);
  for (const record of records) fold.add(record);
  checkFormat(path, fold);
  return fold;
}

/** A transcript written by a newer forkloop (a format this one does not know) is refused. */
function checkFormat(path: string, fold: TranscriptFold): void {
  const format = fold.start?.format ?? 1;
  if (format > TRANSCRIPT_FORMAT) {
    throw new OrchestratorError(
      "transcript_corrupt",
      `${path} was written in transcript format ${format} by a newer forkloop (this one reads up to ${TRANSCRIPT_FORMAT}); update forkloop to resume it.`,
      { path, format },
    );
  }
}

/** A transcript as a resume reads it (R-R12): folded while it streams in, no records kept. */
export interface ReadTranscript {
  readonly fold: TranscriptFold;
  /** Bytes of whole records; a torn tail after them is cut by the writer. */
  readonly validLength: number;
  readonly torn: boolean;
}

/**
 * R-R12: reads a transcript for `--resume` record by record, folding each into the state a
 * resume needs and dropping it (a 321-turn session's resume held every record, 2.2× the run's
 * memory). A bad record hands over to the whole-file decoder, which tells a torn tail (dropped)
 * from damage (refused, as `loadTranscript` does).
 */
export async function readTranscript(path: string): Promise<ReadTranscript> {
  const fold = new TranscriptFold(path);
  const handle = await open(path, "r");
  try {
    const size = (await handle.stat()).size;
    let offset = 0;
    const header = Buffer.alloc(RECORD_HEADER_BYTES);
    while (offset < size) {
      const frame = await readFrameAt(handle, offset, size, header);
      if (frame === undefined) break;
      fold.add(frame.record as TranscriptRecord);
      offset = frame.end;
    }
    if (offset < size) {
      // A bad record: classify it over the whole file (rare: a kill mid-write, or damage).
      const bytes = await readFile(path);
      const decoded = decodeRecords(bytes);
      if (decoded.damage) throw transcriptDamaged(path, decoded.damage, bytes.length);
      const whole = foldRecords(path, decoded.records as TranscriptRecord[]);
      return { fold: whole, validLength: decoded.validLength, torn: decoded.torn };
    }
    checkFormat(path, fold);
    return { fold, validLength: offset, torn: false };
  } finally {
    await handle.close();
  }
}

/** The existing file, for a writer given none: read whole (small files: tests, sub-agents). */
function readExistingSync(path: string, close: () => void): ReadTranscript {
  const bytes = readFileSync(path);
  const decoded = decodeRecords(bytes);
  if (decoded.damage) {
    close();
    throw transcriptDamaged(path, decoded.damage, bytes.length);
  }
  return {
    fold: foldRecords(path, decoded.records as TranscriptRecord[]),
    validLength: decoded.validLength,
    torn: decoded.torn,
  };
}

/** True when `messages` are the first messages of the history the fold holds (same order, same content). */
function startsWithHistory(messages: readonly Message[], fold: TranscriptFold): boolean {
  if (messages.length > fold.messageCount) return false;
  let index = 0;
  for (const recorded of fold.messages()) {
    if (index === messages.length) break;
    const message = messages[index] as Message;
    if (
      message !== recorded &&
      (message.uuid !== recorded.uuid || JSON.stringify(message) !== JSON.stringify(recorded))
    )
      return false;
    index++;
  }
  return index === messages.length;
}

/** What `transcript_corrupt` errors carry (R-R4): enough for a message naming the fix. */
export interface TranscriptDamageData {
  readonly path: string;
  readonly offset: number;
  readonly intactRecords: number;
  readonly laterRecords: number;
  readonly fileBytes: number;
}

function transcriptDamaged(path: string, damage: TranscriptDamage, fileBytes: number): OrchestratorError {
  const data: TranscriptDamageData = {
    path,
    offset: damage.offset,
    intactRecords: damage.intactRecords,
    laterRecords: damage.laterRecords.length,
    fileBytes,
  };
  return new OrchestratorError(
    "transcript_corrupt",
    `${path} is damaged at byte ${damage.offset} of ${fileBytes}: the ${damage.intactRecords} records before it are intact, ${damage.laterRecords.length} readable records follow it. The file was not changed.`,
    { ...data },
  );
}

/** The intact part of a damaged transcript, loaded without touching the file (for `replay`). */
export async function loadIntactTranscript(
  path: string,
): Promise<LoadedTranscript & { readonly damage: TranscriptDamageData | undefined }> {
  const bytes = await readFile(path);
  const decoded = decodeRecords(bytes);
  const loaded = fromRecords(path, decoded.records as TranscriptRecord[], decoded.torn);
  if (!decoded.damage) return { ...loaded, damage: undefined };
  const data = transcriptDamaged(path, decoded.damage, bytes.length).data as unknown as TranscriptDamageData;
  return { ...loaded, damage: data };
}

/**
 * R-R4 `--repair`: keeps the intact records before the damage (a valid conversation up to
 * there), moves the damaged file aside to `<path>.damaged-<time>` (nothing is deleted) and
 * writes the kept records atomically (temp file, fsync, rename). Records after the damage stay
 * in the moved-aside file: their parents may be in the damaged stretch.
 */
export async function repairTranscript(
  path: string,
): Promise<{ readonly keptRecords: number; readonly backupPath: string } | undefined> {
  const bytes = await readFile(path);
  const decoded = decodeRecords(bytes);
  if (!decoded.damage) return undefined;
  const backupPath = `${path}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  const temporary = `${path}.repair-tmp`;
  const handle = await open(temporary, "w", 0o600);
  try {
    await handle.writeFile(bytes.subarray(0, decoded.validLength));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(path, backupPath);
  await rename(temporary, path);
  await syncDirectory(dirname(path));
  return { keptRecords: decoded.records.length, backupPath };
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Where a session's transcript and its sub-agents' transcripts live. */
export function sessionTranscriptPath(sessionsDir: string, sessionId: string): string {
  return join(sessionsDir, `${sessionId}${TRANSCRIPT_EXTENSION}`);
}

export function subAgentTranscriptPath(sessionsDir: string, sessionId: string, agentId: string): string {
  return join(sessionsDir, sessionId, "agents", `${agentId}${TRANSCRIPT_EXTENSION}`);
}
