import { type FileHandle, open, readFile, truncate } from "node:fs/promises";
import { crc32 } from "node:zlib";
import { ForkloopError } from "@forkloop/loop-core/errors";

/**
 * An append-only, crash-safe log of JSON records, one per line: `<crc32 hex8> <json>\n`.
 * `append` resolves only after every byte of the record is written and fsync'd. Records appended
 * while a write is in flight are written and fsync'd together (group commit), so 32 concurrent
 * items do not cost 32 fsyncs. A torn tail (kill -9 mid-write, power loss) fails its checksum or
 * lacks its newline: `readLog` drops it and `openLog` truncates it away, so later appends never
 * follow garbage. A bad record with good records after it is damage: `readLog` reports it and
 * nothing is truncated (R-R4).
 */
export interface AppendLog {
  /** Resolves once durable; rejects with `LogWriteError` (and every later append too) if not. */
  append(record: object): Promise<void>;
  close(): Promise<void>;
}

export interface LogDamage {
  /** Byte offset of the first bad record. */
  readonly offset: number;
  /** Good records before it. */
  readonly intactRecords: number;
  /** Good records after it (each line carries its own checksum, so these are trustworthy). */
  readonly laterRecords: readonly unknown[];
  /** Bad lines (the damaged stretch), counted. */
  readonly badLines: number;
}

export interface LogContents {
  /** The records before any damage, in order. */
  readonly records: readonly unknown[];
  /** Byte length of the valid prefix (where the next append must start). */
  readonly validBytes: number;
  /** True when a torn last record was found and ignored. */
  readonly tornTail: boolean;
  /** Bytes of the file (to say how big a torn tail was). */
  readonly fileBytes: number;
  /** R-R4: damage before the end of the file (never dropped silently). */
  readonly damage?: LogDamage;
}

/**
 * R-R4: a write or fsync of the log failed (ENOSPC, EIO, EROFS …). Nothing of the failed
 * group is acknowledged, the file is cut back to its last whole record, and the log refuses
 * every later append: a record written after a lost one would make the log lie.
 */
export class LogWriteError extends ForkloopError {
  override readonly name = "LogWriteError";
  /**
   * `code` is the errno (ENOSPC, EIO …), so the error reads as the file-system failure it is
   * (describeError names its fix; R-A7).
   */
  constructor(
    readonly path: string,
    code: string,
    cause: unknown,
  ) {
    super(`cannot write ${path}: ${(cause as Error)?.message ?? String(cause)}`, {
      code,
      data: { path },
      cause,
    });
  }
}

export function encodeRecord(record: object): string {
  const json = JSON.stringify(record);
  return `${crc32(json).toString(16).padStart(8, "0")} ${json}\n`;
}

/** Parses a log: records up to the first bad line; a bad line before the end is `damage`. */
export function parseLog(bytes: Buffer): LogContents {
  const records: unknown[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const newline = bytes.indexOf(0x0a, offset);
    const record = newline === -1 ? undefined : decodeLine(bytes.subarray(offset, newline));
    if (record === undefined) {
      const isLast = newline === -1 || newline === bytes.length - 1;
      if (isLast) return { records, validBytes: offset, tornTail: true, fileBytes: bytes.length };
      return {
        records,
        validBytes: offset,
        tornTail: false,
        fileBytes: bytes.length,
        damage: { offset, intactRecords: records.length, ...goodLinesFrom(bytes, offset) },
      };
    }
    records.push(record);
    offset = newline + 1;
  }
  return { records, validBytes: offset, tornTail: false, fileBytes: bytes.length };
}

/** The good records of every whole line from `offset` on, and how many lines were bad. */
function goodLinesFrom(bytes: Buffer, offset: number): { laterRecords: unknown[]; badLines: number } {
  const laterRecords: unknown[] = [];
  let badLines = 0;
  for (let at = offset; at < bytes.length; ) {
    const newline = bytes.indexOf(0x0a, at);
    const end = newline === -1 ? bytes.length : newline;
    const record = newline === -1 ? undefined : decodeLine(bytes.subarray(at, end));
    if (record === undefined) badLines++;
    else laterRecords.push(record);
    at = end + 1;
  }
  return { laterRecords, badLines };
}

function decodeLine(line: Buffer): unknown {
  if (line.length < 10 || line[8] !== 0x20) return undefined;
  const json = line.subarray(9).toString("utf8");
  if (crc32(json).toString(16).padStart(8, "0") !== line.subarray(0, 8).toString("latin1")) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

export async function readLog(path: string): Promise<LogContents> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      return { records: [], validBytes: 0, tornTail: false, fileBytes: 0 };
    // Some read errors (EISDIR) carry no path; the message must name the file.
    (error as NodeJS.ErrnoException).path ??= path;
    throw error;
  }
  return parseLog(bytes);
}

/** How the log opens its file (a seam: tests inject a handle whose writes fail like a full disk). */
export type OpenFile = (path: string, flags: "a") => Promise<FileHandle>;

/** Opens a log for appending after cutting a torn tail (if any) off. A damaged log is refused. */
export async function openLog(
  path: string,
  contents: LogContents,
  // R-S13: a new journal or results log is the owner's alone.
  openFile: OpenFile = (file, flags) => open(file, flags, 0o600),
): Promise<AppendLog> {
  if (contents.damage) throw new Error(`openLog: ${path} is damaged; repair it first`);
  if (contents.tornTail) await truncate(path, contents.validBytes);
  const handle = await openFile(path, "a");
  return new GroupCommitLog(path, handle, contents.validBytes);
}

class GroupCommitLog implements AppendLog {
  #pending: { text: string; resolve: () => void; reject: (error: unknown) => void }[] = [];
  #flushing: Promise<void> | undefined;
  #closed = false;
  #failed: LogWriteError | undefined;

  constructor(
    private readonly path: string,
    private readonly handle: FileHandle,
    /** Bytes known to be whole records on disk. */
    private durableBytes: number,
  ) {}

  append(record: object): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed);
    if (this.#closed) return Promise.reject(new Error("append to a closed journal"));
    const text = encodeRecord(record);
    return new Promise((resolve, reject) => {
      this.#pending.push({ text, resolve, reject });
      this.#flushing ??= this.#flush();
    });
  }

  async #flush(): Promise<void> {
    while (this.#pending.length > 0) {
      const group = this.#pending;
      this.#pending = [];
      if (this.#failed) {
        for (const entry of group) entry.reject(this.#failed);
        continue;
      }
      const bytes = Buffer.from(group.map((entry) => entry.text).join(""));
      try {
        await this.#writeAll(bytes);
        await this.handle.sync();
        this.durableBytes += bytes.length;
        for (const entry of group) entry.resolve();
      } catch (error) {
        this.#failed = new LogWriteError(this.path, (error as NodeJS.ErrnoException).code ?? "EIO", error);
        // Whatever part of the group reached the file is cut off again (best effort: on a
        // read-only remount this fails too, and the next open drops the torn tail).
        await this.handle.truncate(this.durableBytes).catch(() => {});
        for (const entry of group) entry.reject(this.#failed);
      }
    }
    this.#flushing = undefined;
  }

  /** A write may be short (a full disk can take part of it): continue until all is written. */
  async #writeAll(bytes: Buffer): Promise<void> {
    for (let written = 0; written < bytes.length; ) {
      const { bytesWritten } = await this.handle.write(bytes, written, bytes.length - written);
      if (bytesWritten <= 0) throw Object.assign(new Error("the write made no progress"), { code: "EIO" });
      written += bytesWritten;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#flushing;
    await this.handle.close();
  }
}
