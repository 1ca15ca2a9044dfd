import { spawn } from "node:child_process";
import { lstatSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { findExecutable } from "../find-executable.js";
import type { GrepBackend, GrepFileResult, GrepLine, GrepSearch } from "./search.js";

/** The `rg` executable on PATH, or undefined when ripgrep is not installed. */
export function findRipgrep(path = process.env.PATH ?? ""): string | undefined {
  return findExecutable("rg", path);
}

/** ripgrep's arguments for a search; `--json` so that both backends produce the same structure. */
export function ripgrepArgs(search: GrepSearch): string[] {
  // --no-require-git: .gitignore files count outside a git repository too, as in the JS backend
  // (without it a workspace that is not a repo would show its gitignored files).
  // --crlf: "$" matches before "\r\n" as well, as in the JS backend, which searches lines
  // without their CR (a model writing `foo$` means the line's end in a CRLF file too).
  const args = ["--json", "--no-config", "--hidden", "--no-follow", "--no-require-git", "--crlf"];
  if (search.caseInsensitive) args.push("--ignore-case");
  if (search.multiline) args.push("--multiline", "--multiline-dotall");
  if (search.mode === "content") {
    if (search.contextBefore > 0) args.push("--before-context", String(search.contextBefore));
    if (search.contextAfter > 0) args.push("--after-context", String(search.contextAfter));
  }
  // The last matching glob wins: `!.git` after the caller's globs keeps .git out in any case.
  for (const glob of [...search.globs, "!.git"]) args.push("--glob", glob);
  if (search.typeGlobs.length > 0) {
    for (const glob of search.typeGlobs) args.push("--type-add", `forkloop:${glob}`);
    args.push("--type", "forkloop");
  }
  args.push("--max-filesize", String(search.maxFileBytes));
  args.push("--regexp", search.pattern, "--", search.root);
  return args;
}

interface RgText {
  readonly text?: string;
  readonly bytes?: string;
}
interface RgEvent {
  readonly type: string;
  readonly data?: {
    readonly path?: RgText;
    readonly lines?: RgText;
    readonly line_number?: number | null;
    /** On "end": where a NUL byte was found, null for a text file. */
    readonly binary_offset?: number | null;
    /** On "match": each match's text and byte offsets into `lines`. */
    readonly submatches?: readonly { readonly match?: RgText; readonly start?: number }[];
  };
}

/**
 * Turns ripgrep's `--json` output into per-file results (multiline matches split into lines).
 * A file ripgrep found a NUL byte in is dropped: ripgrep stops reading a binary file found by the
 * walk but still reports the matches before the NUL, and searches a binary file named
 * explicitly; Grep skips binary files in both cases (as the JS backend does).
 */
export function parseRipgrepJson(
  output: string,
  mode: GrepSearch["mode"],
  onlyMatching = false,
): GrepFileResult[] {
  const byPath = new Map<string, { matchingLines: number; lines: GrepLine[] }>();
  for (const raw of output.split("\n")) {
    if (raw.trim().length === 0) continue;
    const event = JSON.parse(raw) as RgEvent;
    const path = decode(event.data?.path);
    if (event.type === "end" && typeof event.data?.binary_offset === "number") byPath.delete(path);
    if (event.type !== "match" && event.type !== "context") continue;
    const firstLine = event.data?.line_number ?? 0;
    const block = decode(event.data?.lines);
    const lines = block.replace(/\r?\n$/, "").split("\n");
    const parts =
      onlyMatching && event.type === "match" ? partsByLine(block, event.data?.submatches ?? []) : undefined;
    const entry = byPath.get(path) ?? { matchingLines: 0, lines: [] };
    byPath.set(path, entry);
    lines.forEach((text, offset) => {
      const isMatch = event.type === "match";
      if (isMatch) entry.matchingLines++;
      if (mode === "content") {
        const line: GrepLine = { lineNumber: firstLine + offset, text: text.replace(/\r$/, ""), isMatch };
        entry.lines.push(parts === undefined ? line : { ...line, parts: parts[offset] ?? [] });
      }
    });
  }
  return [...byPath].map(([path, entry]) => ({
    path,
    matchingLines: entry.matchingLines,
    lines: entry.lines,
  }));
}

/** Each line's non-empty matched parts (a match belongs to the line it starts on; offsets are bytes). */
function partsByLine(
  block: string,
  submatches: readonly { readonly match?: RgText; readonly start?: number }[],
): string[][] {
  const bytes = Buffer.from(block, "utf8");
  const byLine: string[][] = [];
  for (const submatch of submatches) {
    const text = decode(submatch.match);
    if (text.length === 0) continue;
    const line =
      bytes
        .subarray(0, submatch.start ?? 0)
        .toString("utf8")
        .split("\n").length - 1;
    byLine[line] = [...(byLine[line] ?? []), text];
  }
  return byLine;
}

function decode(value: RgText | undefined): string {
  if (value?.text !== undefined) return value.text;
  if (value?.bytes !== undefined) return Buffer.from(value.bytes, "base64").toString("utf8");
  return "";
}

function linkCount(path: string): number {
  try {
    return lstatSync(path).nlink;
  } catch {
    return 1;
  }
}

/** Grep through ripgrep (exit 0 = matches, 1 = none, 2 = error). */
export function createRipgrepBackend(executable: string): GrepBackend {
  return (search) =>
    new Promise((resolve) => {
      const child = spawn(executable, ripgrepArgs(search), {
        // ripgrep matches a --glob with a slash against the path relative to its working
        // directory, the JS backend relative to the search root: run ripgrep there.
        cwd: statSync(search.root).isFile() ? dirname(search.root) : search.root,
        stdio: ["ignore", "pipe", "pipe"],
        signal: search.signal,
      });
      const stdout: Buffer[] = [];
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
      });
      child.once("error", (error) => resolve({ ok: false, error: `ripgrep failed: ${error.message}` }));
      child.once("close", (code) => {
        if (code === 2 && stdout.length === 0) {
          resolve({ ok: false, error: `ripgrep: ${stderr.trim()}` });
          return;
        }
        const found = parseRipgrepJson(
          Buffer.concat(stdout).toString("utf8"),
          search.mode,
          search.onlyMatching === true,
        );
        // ripgrep has no link-count filter: matches in hard-linked files are dropped here (R-S4).
        const hardLinked = found.filter((file) => linkCount(file.path) > 1).map((file) => file.path);
        const files = found.filter((file) => !hardLinked.includes(file.path));
        resolve({ ok: true, files, truncated: false, skipped: { tooLarge: [], hardLinked, outside: [] } });
      });
    });
}
