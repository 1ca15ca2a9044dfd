import { withLineEnding } from "./text-file.js";

/** What Edit asks for, as far as the text is concerned. */
export interface Replacement {
  readonly oldString: string;
  readonly newString: string;
  readonly replaceAll: boolean;
}

export type Replaced =
  | {
      readonly ok: true;
      readonly updated: string;
      /** Where the first replacement starts in `updated`, and the text put there (for the snippet). */
      readonly firstChangeAt: number;
      readonly replacement: string;
      readonly count: number;
      /** Where each replaced occurrence started in the original text. */
      readonly at: readonly number[];
    }
  | { readonly ok: false; readonly error: "not_found" | "ambiguous"; readonly count: number };

/**
 * Pure: replaces `oldString` in `text`. The model writes "\n"; in a CRLF file the same text is
 * stored with "\r\n" (R-T3), so that form is tried first there, and second elsewhere. Everything outside the
 * replaced occurrences stays as it was, byte for byte (R-R6: mixed line endings included).
 */
export function replaceInText(text: string, lineEnding: "\n" | "\r\n", request: Replacement): Replaced {
  const target = findTarget(text, request.oldString, lineEnding);
  if (target === undefined) return { ok: false, error: "not_found", count: 0 };
  const at = occurrences(text, target.needle);
  if (at.length > 1 && !request.replaceAll) return { ok: false, error: "ambiguous", count: at.length };
  const replacement = target.crlf ? withLineEnding(request.newString, "\r\n") : request.newString;
  const firstChangeAt = at[0]!;
  // split/join rather than String.replace: `$&` and friends in new_string must stay literal.
  const updated = request.replaceAll
    ? text.split(target.needle).join(replacement)
    : text.slice(0, firstChangeAt) + replacement + text.slice(firstChangeAt + target.needle.length);
  return { ok: true, updated, firstChangeAt, replacement, count: at.length, at };
}

function findTarget(
  text: string,
  oldString: string,
  lineEnding: "\n" | "\r\n",
): { needle: string; crlf: boolean } | undefined {
  // Both forms when the string spans lines, the file's dominant one first: a file with mixed
  // endings holds each somewhere (R-R6: the rest of it keeps its own).
  const crlf = { needle: withLineEnding(oldString, "\r\n"), crlf: true };
  const asGiven = { needle: oldString, crlf: false };
  const candidates = !oldString.includes("\n")
    ? [asGiven]
    : lineEnding === "\r\n"
      ? [crlf, asGiven]
      : [asGiven, crlf];
  return candidates.find((candidate) => text.includes(candidate.needle));
}

/** Where `needle` starts in `text`, non-overlapping, left to right. */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length))
    found.push(index);
  return found;
}
