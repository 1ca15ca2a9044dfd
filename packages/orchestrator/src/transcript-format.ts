import type { FileHandle } from "node:fs/promises";
import { createRequire } from "node:module";
import { crc32 } from "node:zlib";
import type { Packr } from "msgpackr";

/**
 * On-disk framing of a transcript: a sequence of records, each
 *
 *   [u32 LE payload length][u32 LE CRC-32 of the payload][msgpack payload]
 *
 * A process killed mid-write leaves at most one torn record at the end: its length runs past the
 * end of the file or its checksum does not match. Readers stop there and report `torn`; writers
 * truncate the torn tail before appending, so a file never holds garbage between good records.
 */
export const RECORD_HEADER_BYTES = 8;

/** Refuse absurd lengths (a torn header can hold any bytes) instead of allocating them. */
const MAX_RECORD_BYTES = 256 * 1024 * 1024;

// Records are decoded one by one after a crash, so no shared structure table (useRecords: false).
// R-V2: msgpackr is required when the first record is written or read, not at import.
let packer: Packr | undefined;
const packr = (): Packr => {
  if (packer === undefined) {
    const { Packr: Packer } = createRequire(import.meta.url)("msgpackr") as typeof import("msgpackr");
    packer = new Packer({ useRecords: false });
  }
  return packer;
};

/** Encodes one record into a fresh buffer (header + payload). */
export function encodeRecord(value: unknown): Buffer {
  // Packr.pack returns a view into a buffer it reuses on the next call: copy before keeping it.
  const payload = packr().pack(value);
  const frame = Buffer.allocUnsafe(RECORD_HEADER_BYTES + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  frame.writeUInt32LE(crc32(payload), 4);
  payload.copy(frame, RECORD_HEADER_BYTES);
  return frame;
}

export interface DecodedRecords {
  readonly records: unknown[];
  /** Bytes of the file that hold complete, checksummed records. */
  readonly validLength: number;
  /** True when a torn last record (an interrupted write) follows `validLength`; it is dropped. */
  readonly torn: boolean;
  /**
   * R-R4: a damaged record with good records after it — not a torn write, which can only
   * leave a prefix at the end. Nothing is dropped silently: readers refuse the file.
   */
  readonly damage?: TranscriptDamage;
}

export interface TranscriptDamage {
  /** Byte offset of the first damaged record. */
  readonly offset: number;
  /** Good records before it (= `records.length`). */
  readonly intactRecords: number;
  /** Good records found after the damage (what a repair keeps besides the intact ones). */
  readonly laterRecords: unknown[];
}

/**
 * Decodes every complete record. A bad record at the end of the file (the file ends inside it,
 * or it is the last one and fails its checksum) is a torn write: `torn`, dropped. A bad record
 * with a good record after it is damage: `damage`, and `records` holds only what precedes it.
 */
export function decodeRecords(bytes: Buffer): DecodedRecords {
  const records: unknown[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const frame = readFrame(bytes, offset);
    if (frame.ok) {
      records.push(frame.record);
      offset = frame.end;
      continue;
    }
    // A frame that ends exactly at the end of the file, or runs past it, may be a torn write —
    // unless a good record follows (then its length field was damaged, not cut).
    const next = frame.end >= bytes.length ? findFrame(bytes, offset + 1) : frame.end;
    if (next === -1) return { records, validLength: offset, torn: true };
    const laterRecords = recordsFrom(bytes, next);
    return {
      records,
      validLength: offset,
      torn: false,
      damage: { offset, intactRecords: records.length, laterRecords },
    };
  }
  return { records, validLength: offset, torn: false };
}

type Frame = { ok: true; record: unknown; end: number } | { ok: false; end: number };

/** The record at `offset`, or where it claims to end if it is bad. */
function readFrame(bytes: Buffer, offset: number): Frame {
  if (bytes.length - offset < RECORD_HEADER_BYTES) return { ok: false, end: bytes.length };
  const length = bytes.readUInt32LE(offset);
  const checksum = bytes.readUInt32LE(offset + 4);
  const end = offset + RECORD_HEADER_BYTES + length;
  if (length === 0 || length > MAX_RECORD_BYTES || end > bytes.length)
    return { ok: false, end: bytes.length };
  const payload = bytes.subarray(offset + RECORD_HEADER_BYTES, end);
  if (crc32(payload) !== checksum) return { ok: false, end };
  try {
    return { ok: true, record: packr().unpack(payload), end };
  } catch {
    return { ok: false, end };
  }
}

/** msgpack of `{ type: …` as every record starts: a fixmap/map16/map32 header, then "type". */
const TYPE_KEY = Buffer.from([0xa4, ...Buffer.from("type")]);
const MAP_HEADER_BYTES = [1, 3, 5];

/**
 * The offset of the first good record at or after `from`, or -1. Every record is an object
 * whose first key is `type`, so candidates are found with `indexOf`, not a byte-by-byte scan.
 */
function findFrame(bytes: Buffer, from: number): number {
  for (let at = bytes.indexOf(TYPE_KEY, from); at !== -1; at = bytes.indexOf(TYPE_KEY, at + 1)) {
    for (const header of MAP_HEADER_BYTES) {
      const start = at - header - RECORD_HEADER_BYTES;
      if (start >= from && readFrame(bytes, start).ok) return start;
    }
  }
  return -1;
}

/** Every good record from `offset` on, skipping damaged stretches (a repair keeps these). */
function recordsFrom(bytes: Buffer, offset: number): unknown[] {
  const records: unknown[] = [];
  for (let at = offset; at !== -1 && at < bytes.length; ) {
    const frame = readFrame(bytes, at);
    if (frame.ok) {
      records.push(frame.record);
      at = frame.end;
    } else {
      at = findFrame(bytes, at + 1);
    }
  }
  return records;
}

/**
 * R-R12: the good record at `offset` of an open file, read on its own (a streaming reader keeps
 * no more than one record in memory), or undefined where the file ends or the record is bad.
 */
export async function readFrameAt(
  handle: FileHandle,
  offset: number,
  size: number,
  header: Buffer,
): Promise<{ record: unknown; end: number } | undefined> {
  if (size - offset < RECORD_HEADER_BYTES) return undefined;
  await handle.read(header, 0, RECORD_HEADER_BYTES, offset);
  const length = header.readUInt32LE(0);
  const checksum = header.readUInt32LE(4);
  const end = offset + RECORD_HEADER_BYTES + length;
  if (length === 0 || length > MAX_RECORD_BYTES || end > size) return undefined;
  const payload = Buffer.allocUnsafe(length);
  await handle.read(payload, 0, length, offset + RECORD_HEADER_BYTES);
  if (crc32(payload) !== checksum) return undefined;
  try {
    return { record: packr().unpack(payload), end };
  } catch {
    return undefined;
  }
}
