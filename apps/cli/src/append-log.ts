import { type FileHandle, open, readFile, truncate } from "node:fs/promises";
import { crc32 } from "node:zlib";

/**
 * An append-only, crash-safe log of JSON records, one per line: `<crc32 hex8> <json>\n`.
 * `append` resolves only after the record is fsync'd. Records appended while a write is in flight
 * are written and fsync'd together (group commit), so 32 concurrent items do not cost 32 fsyncs.
 * A torn tail (kill -9 mid-write, power loss) fails its checksum or lacks its newline: `readLog`
 * drops it and `openLog` truncates it away, so later appends never follow garbage.
 */
export interface AppendLog {
  append(record: object): Promise<void>;
  close(): Promise<void>;
}

export interface LogContents {
  readonly records: readonly unknown[];
  /** Byte length of the valid prefix (where the next append must start). */
  readonly validBytes: number;
  /** True when a torn last record was found and ignored. */
  readonly tornTail: boolean;
}

export class CorruptLogError extends Error {
  override readonly name = "CorruptLogError";
}

export function encodeRecord(record: object): string {
  const json = JSON.stringify(record);
  return `${crc32(json).toString(16).padStart(8, "0")} ${json}\n`;
}

/** Parses a log; a bad record that is not the last one is real corruption and throws. */
export function parseLog(bytes: Buffer): LogContents {
  const records: unknown[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const newline = bytes.indexOf(0x0a, offset);
    const isLast = newline === -1 || newline === bytes.length - 1;
    const line = bytes.subarray(offset, newline === -1 ? bytes.length : newline).toString("utf8");
    const record = newline === -1 ? undefined : decodeLine(line);
    if (record === undefined) {
      if (isLast) return { records, validBytes: offset, tornTail: true };
      throw new CorruptLogError(
        `corrupt record at byte ${offset} (not the last one): the journal was edited or damaged`,
      );
    }
    records.push(record);
    offset = newline + 1;
  }
  return { records, validBytes: offset, tornTail: false };
}

function decodeLine(line: string): unknown {
  const space = line.indexOf(" ");
  if (space !== 8) return undefined;
  const json = line.slice(9);
  if (crc32(json).toString(16).padStart(8, "0") !== line.slice(0, 8)) return undefined;
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
      return { records: [], validBytes: 0, tornTail: false };
    throw error;
  }
  return parseLog(bytes);
}

/** Opens a log for appending after cutting a torn tail (if any) off. */
export async function openLog(path: string, contents: LogContents): Promise<AppendLog> {
  if (contents.tornTail) await truncate(path, contents.validBytes);
  const handle = await open(path, "a");
  return new GroupCommitLog(handle);
}

class GroupCommitLog implements AppendLog {
  #pending: { text: string; resolve: () => void; reject: (error: unknown) => void }[] = [];
  #flushing: Promise<void> | undefined;
  #closed = false;

  constructor(private readonly handle: FileHandle) {}

  append(record: object): Promise<void> {
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
      try {
        await this.handle.write(group.map((entry) => entry.text).join(""));
        await this.handle.sync();
        for (const entry of group) entry.resolve();
      } catch (error) {
        for (const entry of group) entry.reject(error);
      }
    }
    this.#flushing = undefined;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#flushing;
    await this.handle.close();
  }
}
