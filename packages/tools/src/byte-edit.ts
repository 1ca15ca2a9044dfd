import { type Replaced, type Replacement, replaceInText } from "./edit-replace.js";
import { dominantLineEnding } from "./text-file.js";

export type ByteReplaced =
  | { readonly ok: true; readonly bytes: Buffer; readonly replaced: Extract<Replaced, { ok: true }> }
  | { readonly ok: false; readonly refusal: string }
  | Extract<Replaced, { ok: false }>;

/**
 * R-R6: an Edit in a file that is not valid UTF-8 (Latin-1, Shift-JIS, a stray byte). Decoded, each
 * such byte would become U+FFFD and be written back as EF BF BD, so the edit is made on the bytes:
 * the file is viewed one character per byte (latin1, which round-trips every byte), `old_string`
 * is found there and replaced by `new_string`, and every other byte stays as it was.
 *
 * Which encoding the file is in is unknown, so only what means the same in all of them is done:
 * both strings must be ASCII (one byte per character in every ASCII-compatible encoding), and no
 * match may follow a byte ≥ 0x80 — in Shift-JIS or GBK that byte may lead a two-byte character
 * whose second byte is ASCII, and the match would be half of it. Anything else is refused with the
 * reason and the fix.
 */
export function replaceInBytes(bytes: Buffer, request: Replacement, why: string, path: string): ByteReplaced {
  const fix = "convert the file to UTF-8 first (e.g. `iconv -f latin1 -t utf-8`), or edit it with Bash";
  if (!isAscii(request.oldString) || !isAscii(request.newString)) {
    return {
      ok: false,
      refusal: `${path} is ${why}. Edit changes such a file byte for byte, keeping every other byte as it is, so old_string and new_string must be plain ASCII; ${fix}.`,
    };
  }
  const view = bytes.toString("latin1");
  const replaced = replaceInText(view, dominantLineEnding(view), request);
  if (!replaced.ok) return replaced;
  const split = replaced.at.find((index) => index > 0 && view.charCodeAt(index - 1) >= 0x80);
  if (split !== undefined) {
    const line = view.slice(0, split).split("\n").length;
    return {
      ok: false,
      refusal: `${path} is ${why}. The match on line ${line} follows a non-ASCII byte: in a multi-byte encoding (Shift-JIS, GBK) it could be the second half of a character. Choose an old_string that starts after an ASCII character, or ${fix}.`,
    };
  }
  return { ok: true, bytes: Buffer.from(replaced.updated, "latin1"), replaced };
}

/** Every UTF-16 unit below 0x80 exactly when UTF-8 needs one byte per unit. */
export function isAscii(text: string): boolean {
  return Buffer.byteLength(text, "utf8") === text.length;
}
