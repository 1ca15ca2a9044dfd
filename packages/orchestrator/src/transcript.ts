import { closeSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { open, readdir, readFile, rename, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { CacheSafeParams, LoopEvent, Message, TerminalReason, UsageTotals } from "@forkloop/loop-core";
import { OrchestratorError } from "./errors.js";
import { decodeRecords, encodeRecord, type TranscriptDamage } from "./transcript-format.js";

/** The context lines of R-C7 a session ran with (its model's window, model overrides included). */
export interface ContextLimits {
  readonly contextWindow: number;
  readonly autoCompact: number;
  readonly blockingLimit: number;
}

/** File name suffix of a transcript (msgpack records, see transcript-format.ts). */
export const TRANSCRIPT_EXTENSION = ".fltr";

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
    }
  | { readonly type: "message"; readonly message: Message }
  /** The whole history replaced at once (after a compaction): loaders restart from these. */
  | { readonly type: "history"; readonly messages: readonly Message[] }
  | { readonly type: "cache_safe_params"; readonly params: CacheSafeParams }
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
   * One model request, for reports (issue 17; absent in older transcripts): when it started, its
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

  constructor(path: string, options: TranscriptWriterOptions = {}) {
    this.path = path;
    this.#fsync = options.fsync ?? false;
    this.#write = options.writeSync ?? ((fd, buffer, offset) => writeSync(fd, buffer, offset));
    mkdirSync(dirname(path), { recursive: true });
    this.#fd = openSync(path, "a+");
    const existing = readFileSync(path);
    const decoded = decodeRecords(existing);
    if (decoded.damage) {
      closeSync(this.#fd);
      this.#fd = null;
      throw transcriptDamaged(path, decoded.damage, existing.length);
    }
    if (decoded.torn) ftruncateSync(this.#fd, decoded.validLength);
    this.#records = decoded.records.length;
    this.#length = decoded.validLength;
  }

  /** Number of records in the file (including those written before this writer opened it). */
  get recordCount(): number {
    return this.#records;
  }

  /**
   * Writes one record; returns only once every byte was written (a short write is continued).
   * Issue 11: a failed write (ENOSPC, EIO, EROFS) is cut back off the file, so a later append or
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
 * Loads a transcript for resuming. Messages are de-duplicated by uuid (a resumed session may
 * re-append history); a `history` record (written after a compaction) replaces everything before
 * it, because the compact summary stands for it.
 */
export async function loadTranscript(path: string): Promise<LoadedTranscript> {
  const bytes = await readFile(path);
  const decoded = decodeRecords(bytes);
  if (decoded.damage) throw transcriptDamaged(path, decoded.damage, bytes.length);
  return fromRecords(path, decoded.records as TranscriptRecord[], decoded.torn);
}

function fromRecords(path: string, records: TranscriptRecord[], torn: boolean): LoadedTranscript {
  const byUuid = new Map<string, Message>();
  let start: LoadedTranscript["start"];
  let cacheSafeParams: CacheSafeParams | undefined;
  let terminal: LoadedTranscript["terminal"];
  for (const record of records) {
    switch (record.type) {
      case "session_start":
        start ??= record;
        break;
      case "message":
        byUuid.set(record.message.uuid, record.message);
        break;
      case "history":
        byUuid.clear();
        for (const message of record.messages) byUuid.set(message.uuid, message);
        break;
      case "cache_safe_params":
        cacheSafeParams = record.params;
        break;
      case "terminal":
        terminal = record;
        break;
      case "sub_agent":
      case "transition":
      case "request":
      case "tool_started":
      case "rate_limited":
        break;
      default:
        throw new OrchestratorError("transcript_corrupt", `unknown record type in ${path}`, { record });
    }
  }
  return { messages: [...byUuid.values()], torn, records, start, cacheSafeParams, terminal };
}

/** What `transcript_corrupt` errors carry (issue 11): enough for a message naming the fix. */
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
 * Issue 11 `--repair`: keeps the intact records before the damage (a valid conversation up to
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
  const handle = await open(temporary, "w");
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

export interface SessionSummary {
  readonly sessionId: string;
  readonly path: string;
  readonly createdAt: string | undefined;
  readonly updatedAt: string;
  readonly model: string | undefined;
  readonly cwd: string | undefined;
  readonly messageCount: number;
  /** Text of the first user message, cut to 200 characters. */
  readonly firstPrompt: string | undefined;
  readonly terminalReason: TerminalReason | undefined;
  readonly torn: boolean;
  /** Issue 11: where the transcript is damaged (the summary then covers the intact part). */
  readonly damage?: TranscriptDamageData;
}

function firstUserText(messages: readonly Message[]): string | undefined {
  const first = messages.find((message) => message.type === "user");
  if (!first) return undefined;
  const content = first.message.content;
  const text =
    typeof content === "string"
      ? content
      : content.map((block) => (block.type === "text" ? block.text : "")).join("");
  return text.slice(0, 200);
}

/** Lists the top-level session transcripts in `dir`, newest first. */
export async function listSessions(dir: string): Promise<SessionSummary[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const summaries = await Promise.all(
    names
      .filter((name) => name.endsWith(TRANSCRIPT_EXTENSION))
      .map(async (name): Promise<SessionSummary> => {
        const path = join(dir, name);
        const [loaded, info] = await Promise.all([loadIntactTranscript(path), stat(path)]);
        return {
          sessionId: loaded.start?.sessionId ?? name.slice(0, -TRANSCRIPT_EXTENSION.length),
          path,
          createdAt: loaded.start?.createdAt,
          updatedAt: info.mtime.toISOString(),
          model: loaded.start?.model,
          cwd: loaded.start?.cwd,
          messageCount: loaded.messages.length,
          firstPrompt: firstUserText(loaded.messages),
          terminalReason: loaded.terminal?.reason,
          torn: loaded.torn,
          ...(loaded.damage === undefined ? {} : { damage: loaded.damage }),
        };
      }),
  );
  return summaries.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

/** Where a session's transcript and its sub-agents' transcripts live. */
export function sessionTranscriptPath(sessionsDir: string, sessionId: string): string {
  return join(sessionsDir, `${sessionId}${TRANSCRIPT_EXTENSION}`);
}

export function subAgentTranscriptPath(sessionsDir: string, sessionId: string, agentId: string): string {
  return join(sessionsDir, sessionId, "agents", `${agentId}${TRANSCRIPT_EXTENSION}`);
}
