import { extname } from "node:path";

/** How a text file is stored on disk; Edit and Write keep it (issue 4: "keeps line endings and encoding"). */
export interface TextFormat {
  readonly encoding: "utf8" | "utf16le" | "utf16be";
  readonly bom: boolean;
  /** The dominant line ending; new text written into the file uses it. */
  readonly lineEnding: "\n" | "\r\n";
}

export type DecodedText =
  | { readonly ok: true; readonly text: string; readonly format: TextFormat }
  | { readonly ok: false; readonly error: string };

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

/** Decodes a text file, refusing binary content with a message that says why (issue 4: Read). */
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
  let text: string;
  let encoding: TextFormat["encoding"] = "utf8";
  let bom = false;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    bom = true;
    text = new TextDecoder("utf-8").decode(bytes.subarray(3));
  } else if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    bom = true;
    encoding = "utf16le";
    text = new TextDecoder("utf-16le").decode(bytes.subarray(2));
  } else if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    bom = true;
    encoding = "utf16be";
    text = new TextDecoder("utf-16be").decode(bytes.subarray(2));
  } else {
    text = new TextDecoder("utf-8").decode(bytes);
  }
  return { ok: true, text, format: { encoding, bom, lineEnding: dominantLineEnding(text) } };
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
