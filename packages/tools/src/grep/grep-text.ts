import { setImmediate as nextTurn } from "node:timers/promises";
import type { LinearRegex, RegexEngine } from "../patterns/linear-regex.js";
import { decodeTextFile, startsWithUtf16Bom } from "../text-file.js";
import { readConfinedFile } from "./read-confined-file.js";
import type { GrepFileResult, GrepLine, GrepOutcome, GrepSearch } from "./search.js";

/**
 * Files read synchronously between two event-loop turns. Synchronous reads of small source files
 * measured 2-4x faster than fs/promises here (no thread-pool round trips per file); yielding after
 * each batch keeps the loop responsive (abort, other tools' I/O).
 */
const READ_BATCH = 64;

/** What searching a list of files needs: the request without its walk and its signal (it crosses to a thread). */
export type FileMatchRequest = Pick<
  GrepSearch,
  | "pattern"
  | "caseInsensitive"
  | "multiline"
  | "mode"
  | "contextBefore"
  | "contextAfter"
  | "onlyMatching"
  | "maxLines"
  | "maxFileBytes"
> & {
  /** The workspace roots, resolved (realpath): a file whose opened real path is elsewhere is skipped. */
  readonly realRoots: readonly string[];
};

/**
 * Reads and searches `files` in order (the JavaScript backend's work after its walk): each file
 * opened once and confined, binary files skipped, stopping once content mode has more lines than
 * the caller shows. `stopped` is asked between files.
 */
export async function matchFiles(
  files: readonly string[],
  request: FileMatchRequest,
  engine: RegexEngine,
  stopped: () => boolean = () => false,
): Promise<GrepOutcome> {
  const compiled = compilePattern(request, engine);
  if ("error" in compiled) return { ok: false, error: compiled.error };
  const results: GrepFileResult[] = [];
  const skipped = { tooLarge: [] as string[], hardLinked: [] as string[], outside: [] as string[] };
  let outputLines = 0;
  let truncated = false;
  for (let index = 0; index < files.length && !truncated && !stopped(); index++) {
    if (index > 0 && index % READ_BATCH === 0) await nextTurn();
    const path = files[index] as string;
    // Opened once and judged by what was opened, so a symlink swapped in since the walk reads nothing.
    const read = readConfinedFile(path, request.realRoots, request.maxFileBytes);
    if (!read.ok) {
      if (read.skipped === "too-large") skipped.tooLarge.push(path);
      else if (read.skipped === "hard-linked") skipped.hardLinked.push(path);
      else if (read.skipped === "outside") skipped.outside.push(path);
      continue; // Vanished, unreadable or not a regular file since the walk: skipped, as ripgrep does.
    }
    const text = searchableText(read.bytes, path);
    if (text === undefined) continue;
    const result = searchText(path, text, compiled, request);
    if (result === undefined) continue;
    results.push(result);
    outputLines += result.lines.length;
    // More lines than the caller shows: the formatter then says the output was cut, as it does
    // for the ripgrep backend's complete output.
    if (request.mode === "content" && outputLines > request.maxLines) truncated = true;
  }
  return { ok: true, files: results, truncated, skipped };
}

/**
 * The text ripgrep would search, or undefined for a binary file. ripgrep decodes a UTF-16 file
 * by its BOM and drops a UTF-8 BOM; a NUL byte anywhere else makes the file binary. (ripgrep
 * stops at the first NUL; the ripgrep backend then drops the file's matches too, so "binary"
 * means the same in both backends, for an explicitly named file as well.)
 */
function searchableText(bytes: Buffer, path: string): string | undefined {
  if (startsWithUtf16Bom(bytes)) {
    const decoded = decodeTextFile(bytes, path);
    return decoded.ok ? decoded.text : undefined;
  }
  if (bytes.includes(0)) return undefined;
  // Buffer#toString, not TextDecoder: measurably faster over thousands of small files.
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  return bytes.toString("utf8", bom ? 3 : 0);
}

interface CompiledPattern {
  /** Tests one line. */
  readonly line: LinearRegex;
  /** Whole-text search: the real search in multiline mode. */
  readonly text: LinearRegex;
  /**
   * Whether a miss of `text` proves no line matches, so the file is skipped unsplit. Not with
   * `\A` or `\z`: they match at every line's ends in a line, at the text's only in the text.
   */
  readonly prefilter: boolean;
}

export function compilePattern(
  search: FileMatchRequest,
  engine: RegexEngine,
): CompiledPattern | { error: string } {
  const caseInsensitive = search.caseInsensitive;
  const line = engine(search.pattern, { caseInsensitive });
  if (!line.ok) return { error: line.error };
  // Multiline = ripgrep's -U --multiline-dotall: "." crosses newlines, ^/$ match at line ends.
  const text = engine(search.pattern, { caseInsensitive, multiLine: true, dotAll: search.multiline });
  if (!text.ok) return { error: text.error };
  return { line: line.regex, text: text.regex, prefilter: !/(?<!\\)(?:\\\\)*\\[Az]/.test(search.pattern) };
}

function searchText(
  path: string,
  text: string,
  pattern: CompiledPattern,
  search: FileMatchRequest,
): GrepFileResult | undefined {
  // CRLF: ripgrep's --crlf lets `$` match before "\r\n"; RE2's (?m) `$` only sees "\n".
  const lfText = text.includes("\r\n") ? text.replace(/\r\n/g, "\n") : text;
  // Any match of a line is also a match of the whole text, so a miss here skips the file safely.
  if (pattern.prefilter && !pattern.text.test(lfText)) return undefined;
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const clean = lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));

  const matched = search.multiline
    ? multilineMatches(lfText, pattern.text)
    : singleLineMatches(clean, pattern.line);
  if (matched.size === 0) return undefined;
  if (search.mode !== "content") return { path, matchingLines: matched.size, lines: [] };

  const shown = new Set<number>();
  for (const index of matched) {
    const from = Math.max(0, index - search.contextBefore);
    const to = Math.min(clean.length - 1, index + search.contextAfter);
    for (let line = from; line <= to; line++) shown.add(line);
  }
  const output: GrepLine[] = [...shown]
    .sort((left, right) => left - right)
    .map((index) => {
      const line: GrepLine = { lineNumber: index + 1, text: clean[index] ?? "", isMatch: matched.has(index) };
      return search.onlyMatching === true && line.isMatch
        ? { ...line, parts: partsOf(line.text, pattern.line) }
        : line;
    });
  return { path, matchingLines: matched.size, lines: output };
}

/** The non-empty matched parts of one line (ripgrep's --only-matching skips empty matches). */
function partsOf(text: string, regex: LinearRegex): string[] {
  const parts: string[] = [];
  for (const [start, end] of regex.matches(text)) if (end > start) parts.push(text.slice(start, end));
  return parts;
}

function singleLineMatches(lines: readonly string[], regex: LinearRegex): Set<number> {
  const matched = new Set<number>();
  lines.forEach((line, index) => {
    if (regex.test(line)) matched.add(index);
  });
  return matched;
}

/** Every line a multiline match touches counts as matching, as in ripgrep's output. */
function multilineMatches(text: string, regex: LinearRegex): Set<number> {
  const lineStarts = [0];
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1))
    lineStarts.push(index + 1);
  const lineOf = (offset: number): number => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((lineStarts[middle] as number) <= offset) low = middle;
      else high = middle - 1;
    }
    return low;
  };
  const matched = new Set<number>();
  for (const [start, end] of regex.matches(text)) {
    const last = lineOf(Math.max(start, end - 1));
    for (let line = lineOf(start); line <= last; line++) matched.add(line);
  }
  // A match ending exactly at the final newline would point past the last line.
  const lineCount = text.endsWith("\n") ? lineStarts.length - 1 : lineStarts.length;
  for (const line of matched) if (line >= lineCount) matched.delete(line);
  return matched;
}
