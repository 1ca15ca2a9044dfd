import { crc32 } from "node:zlib";
import { Packr } from "msgpackr";

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
const packr = new Packr({ useRecords: false });

/** Encodes one record into a fresh buffer (header + payload). */
export function encodeRecord(value: unknown): Buffer {
  // Packr.pack returns a view into a buffer it reuses on the next call: copy before keeping it.
  const payload = packr.pack(value);
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
  /** True when bytes after `validLength` were dropped (a torn or corrupt last record). */
  readonly torn: boolean;
}

/** Decodes every complete record; stops at the first torn or corrupt one. */
export function decodeRecords(bytes: Buffer): DecodedRecords {
  const records: unknown[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    if (bytes.length - offset < RECORD_HEADER_BYTES) break;
    const length = bytes.readUInt32LE(offset);
    const checksum = bytes.readUInt32LE(offset + 4);
    const end = offset + RECORD_HEADER_BYTES + length;
    if (length > MAX_RECORD_BYTES || end > bytes.length) break;
    const payload = bytes.subarray(offset + RECORD_HEADER_BYTES, end);
    if (crc32(payload) !== checksum) break;
    try {
      records.push(packr.unpack(payload));
    } catch {
      break;
    }
    offset = end;
  }
  return { records, validLength: offset, torn: offset < bytes.length };
}
