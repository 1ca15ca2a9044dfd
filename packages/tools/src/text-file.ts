import { isUtf8 } from "node:buffer";
import { extname } from "node:path";

/** How a text file is stored on disk; Edit and Write keep it (R-T3: "keeps line endings and encoding"). */
export interface TextFormat {
  readonly encoding: "utf8" | "utf16le" | "utf16be";
  readonly bom: boolean;
  /** The dominant line ending; new text written into the file uses it. */
  readonly lineEnding: "\n" | "\r\n";
}

export type DecodedText =
  | {
      readonly ok: true;
      readonly text: string;
      readonly format: TextFormat;
      /**
       * R-R6: set when the bytes are not valid in the detected encoding (Latin-1, Shift-JIS, a stray
       * byte): `text` then shows each byte that does not decode as U+FFFD, so writing it back would
       * change bytes the caller never touched.
       */
      readonly undecodable?: Undecodable;
    }
  | { readonly ok: false; readonly error: string };

/** Where a file stops being valid text in its encoding, for the messages. */
export interface Undecodable {
  /** `not valid UTF-8 (byte 0xE9 at offset 12, line 2)`. */
  readonly reason: string;
}

/** Bytes sniffed for binary content, like ripgrep and git (which look at the first 8 KiB). */
const SNIFF_BYTES = 8192;

const BINARY_EXTENSIONS = new Set(
  (
    "png jpg jpeg gif bmp ico webp tiff psd pdf zip gz tgz bz2 xz 7z rar tar jar war class exe dll so dylib " +
    "o a lib bin dat wasm pyc mp3 mp4 mov avi mkv wav flac ogg woff woff2 ttf otf eot sqlite db"
  ).split(" "),
);

/** True when the bytes look binary: a NUL byte in the first 8 KiB (the rule git and ripgrep use). */
export function looksBinary(bytes: Uint8Array): boolean {
  if (startsWithUtf16Bom(bytes)) return false;
  const end = Math.min(bytes.length, SNIFF_BYTES);
  for (let index = 0; index < end; index++) if (bytes[index] === 0) return true;
  return false;
}

/** Decodes a text file, refusing binary content with a message that says why (R-T3: Read). */
export function decodeTextFile(bytes: Uint8Array, path: string): DecodedText {
  if (looksBinary(bytes)) {
    const extension = extname(path).slice(1).toLowerCase();
    const kind = BINARY_EXTENSIONS.has(extension)
      ? `a binary .${extension} file`
      : "binary (it contains NUL bytes)";
    return {
      ok: false,
      error: `${path} is ${kind}; this tool only reads text. Use Bash (e.g. \`file\`, \`xxd | head\`) to inspect it.`,
    };
  }
  const utf16 =
    bytes[0] === 0xff && bytes[1] === 0xfe
      ? "utf-16le"
      : bytes[0] === 0xfe && bytes[1] === 0xff
        ? "utf-16be"
        : undefined;
  if (utf16 !== undefined) {
    const body = bytes.subarray(2);
    const text = decode(utf16, body);
    const encoding = utf16 === "utf-16le" ? "utf16le" : "utf16be";
    return {
      ok: true,
      text: text ?? new TextDecoder(utf16, { ignoreBOM: true }).decode(body),
      format: { encoding, bom: true, lineEnding: dominantLineEnding(text ?? "") },
      ...(text === undefined
        ? { undecodable: { reason: "not valid UTF-16 (an unpaired surrogate, or an odd number of bytes)" } }
        : {}),
    };
  }
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const body = bom ? bytes.subarray(3) : bytes;
  // ignoreBOM: a BOM after the one handled here is content, kept as U+FEFF (R-R6: every byte kept).
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(body);
  const format: TextFormat = { encoding: "utf8", bom, lineEnding: dominantLineEnding(text) };
  if (isUtf8(body)) return { ok: true, text, format };
  const offset = invalidUtf8Offset(body) + (bom ? 3 : 0);
  const line = countLineBreaks(bytes.subarray(0, offset)) + 1;
  return {
    ok: true,
    text,
    format,
    undecodable: {
      reason: `not valid UTF-8 (byte 0x${(bytes[offset] ?? 0).toString(16).toUpperCase().padStart(2, "0")} at offset ${offset}, line ${line}): likely Latin-1, Shift-JIS or another legacy encoding`,
    },
  };
}

/** The text, or undefined when the bytes are not valid in `encoding`. */
function decode(encoding: "utf-16le" | "utf-16be", bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder(encoding, { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The offset of the first byte that is not part of a well-formed UTF-8 sequence (RFC 3629), or -1. */
function invalidUtf8Offset(bytes: Uint8Array): number {
  for (let index = 0; index < bytes.length; ) {
    const lead = bytes[index]!;
    if (lead < 0x80) {
      index++;
      continue;
    }
    const [length, low, high] = sequenceRule(lead);
    if (length === 0) return index;
    const second = bytes[index + 1];
    if (second === undefined || second < low || second > high) return index;
    for (let next = 2; next < length; next++) {
      const byte = bytes[index + next];
      if (byte === undefined || byte < 0x80 || byte > 0xbf) return index;
    }
    index += length;
  }
  return -1;
}

/**
 * A UTF-8 lead byte's sequence length and the range its second byte must fall in (RFC 3629 table:
 * no overlong forms, no surrogates, nothing above U+10FFFF); length 0 for a byte no sequence starts with.
 */
function sequenceRule(lead: number): readonly [length: number, low: number, high: number] {
  if (lead >= 0xc2 && lead <= 0xdf) return [2, 0x80, 0xbf];
  if (lead === 0xe0) return [3, 0xa0, 0xbf];
  if (lead === 0xed) return [3, 0x80, 0x9f];
  if (lead >= 0xe1 && lead <= 0xef) return [3, 0x80, 0xbf];
  if (lead === 0xf0) return [4, 0x90, 0xbf];
  if (lead === 0xf4) return [4, 0x80, 0x8f];
  if (lead >= 0xf1 && lead <= 0xf3) return [4, 0x80, 0xbf];
  return [0, 0, 0];
}

function countLineBreaks(bytes: Uint8Array): number {
  let count = 0;
  for (const byte of bytes) if (byte === 0x0a) count++;
  return count;
}

/** Encodes text back in the file's original encoding, with its BOM if it had one. */
export function encodeTextFile(text: string, format: TextFormat): Buffer {
  switch (format.encoding) {
    case "utf8": {
      const body = Buffer.from(text, "utf8");
      return format.bom ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]) : body;
    }
    case "utf16le": {
      const body = Buffer.from(text, "utf16le");
      return format.bom ? Buffer.concat([Buffer.from([0xff, 0xfe]), body]) : body;
    }
    case "utf16be": {
      const body = Buffer.from(text, "utf16le").swap16();
      return format.bom ? Buffer.concat([Buffer.from([0xfe, 0xff]), body]) : body;
    }
    default: {
      const unreachable: never = format.encoding;
      throw new Error(`unknown encoding ${String(unreachable)}`);
    }
  }
}

export const NEW_FILE_FORMAT: TextFormat = { encoding: "utf8", bom: false, lineEnding: "\n" };

/** CRLF when most line breaks are CRLF; a file without line breaks counts as LF. */
export function dominantLineEnding(text: string): "\n" | "\r\n" {
  let crlf = 0;
  let lf = 0;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) {
    if (index > 0 && text.charCodeAt(index - 1) === 13) crlf++;
    else lf++;
  }
  return crlf > lf ? "\r\n" : "\n";
}

/** Rewrites every line break of `text` (LF or CRLF) as `lineEnding`. */
export function withLineEnding(text: string, lineEnding: "\n" | "\r\n"): string {
  const normalized = text.replace(/\r\n/g, "\n");
  return lineEnding === "\n" ? normalized : normalized.replace(/\n/g, "\r\n");
}

/** A UTF-16 byte-order mark (either order): such a file is text even though it is full of NULs. */
export function startsWithUtf16Bom(bytes: Uint8Array): boolean {
  return (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
}
