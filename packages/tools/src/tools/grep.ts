import { stat } from "node:fs/promises";
import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import { typeGlobs } from "../grep/file-types.js";
import { jsGrepBackend } from "../grep/js-backend.js";
import { splitGlobs } from "../grep/path-filter.js";
import { createRipgrepBackend, findRipgrep } from "../grep/ripgrep-backend.js";
import type { GrepBackend, GrepFileResult, GrepSearch, GrepSkipped } from "../grep/search.js";
import { type DeniedPathsOption, deniedPathFilters } from "../permissions/denied-paths.js";
import { absolutePath, defineTool, sortNewestFirst, toolError } from "../tool-kit.js";
import { resolveInWorkspace } from "../workspace-paths.js";

/** Lines longer than this are cut in content output (Claude Code passes `--max-columns 500`). */
const GREP_MAX_LINE_CHARS = 500;
/** Content mode stops collecting after this many lines; far more than the result cap can show. */
const GREP_MAX_CONTENT_LINES = 5_000;
/** Files above this size are skipped and named in the output (R-S4). */
const GREP_MAX_FILE_BYTES = 20 * 1024 * 1024;

export interface GrepToolOptions extends DeniedPathsOption {
  /**
   * `auto` (default): ripgrep when `rg` is on PATH at call time, else the JavaScript backend.
   * Tests and benchmarks force `js`, or pass their own backend.
   */
  readonly backend?: "auto" | "js" | GrepBackend;
  /** Per-file size cap (default GREP_MAX_FILE_BYTES). */
  readonly maxFileBytes?: number;
}

const grepInput = lazySchema(() =>
  z.object({
    pattern: z.string().min(1).describe("The regular expression to search for in file contents"),
    path: z.string().optional().describe("File or directory to search in (default: the working directory)"),
    glob: z.string().optional().describe('Glob filter for files, e.g. "*.js" or "*.{ts,tsx}" (rg --glob)'),
    type: z.string().optional().describe("File type to search (rg --type), e.g. js, py, rust, go, java"),
    output_mode: z
      .enum(["content", "files_with_matches", "count"])
      .optional()
      .describe(
        '"content" shows matching lines, "files_with_matches" (default) file paths, "count" match counts',
      ),
    "-i": z.boolean().optional().describe("Case insensitive search"),
    "-n": z.boolean().optional().describe("Show line numbers (content mode; default true)"),
    "-o": z
      .boolean()
      .optional()
      .describe(
        "Print only the matched (non-empty) parts of each matching line, one per output line (content mode)",
      ),
    "-A": z.number().min(0).optional().describe("Lines to show after each match (content mode)"),
    "-B": z.number().min(0).optional().describe("Lines to show before each match (content mode)"),
    "-C": z.number().min(0).optional().describe("Alias for context."),
    context: z
      .number()
      .min(0)
      .optional()
      .describe("Lines to show before and after each match (content mode)"),
    head_limit: z
      .number()
      .min(0)
      .optional()
      .describe("Show only the first N lines / files / count entries; 0 for no limit"),
    offset: z
      .number()
      .min(0)
      .optional()
      .describe("Skip the first N lines / files / count entries before applying head_limit (default 0)"),
    multiline: z
      .boolean()
      .optional()
      .describe("Let patterns span lines; . matches newlines (rg -U --multiline-dotall)"),
  }),
);

export function createGrepTool(options: GrepToolOptions = {}) {
  const chooseBackend = (): GrepBackend => {
    const backend = options.backend ?? "auto";
    if (typeof backend === "function") return backend;
    const rg = backend === "auto" ? findRipgrep() : undefined;
    return rg === undefined ? jsGrepBackend : createRipgrepBackend(rg);
  };
  const deniedFor = deniedPathFilters("Grep", options);
  return defineTool({
    name: "Grep",
    description:
      "Searches file contents with a regular expression (ripgrep syntax), respecting .gitignore and skipping " +
      "binary files. Filter with glob or type; output_mode content (with -A/-B/-C or context lines, -n line numbers, -o for only the matched parts), " +
      "files_with_matches (default, newest first) or count; offset skips the first N entries and head_limit keeps the next N (0: all). Use multiline " +
      "for patterns that span lines.",
    inputSchema: grepInput,
    isConcurrencySafe: () => true,
    isReadOnly: () => true,
    maxResultSizeChars: 20_000,
    backfillInput: (input, context) =>
      input.path === undefined ? input : { ...input, path: absolutePath(input.path, context.cwd) },
    async call(input, context) {
      const notWhole = WHOLE_NUMBER_FIELDS.find(
        (field) => input[field] !== undefined && !Number.isInteger(input[field]),
      );
      if (notWhole !== undefined)
        return toolError(`${notWhole} must be a whole number of 0 or more, got ${input[notWhole]}.`);
      const resolved = resolveInWorkspace(input.path ?? context.cwd, context);
      if (!resolved.ok) return toolError(resolved.error);
      const types = input.type === undefined ? [] : typeGlobs(input.type);
      if ("error" in types) return toolError(types.error);
      const mode = input.output_mode ?? "files_with_matches";
      // Claude Code's reading: `context` (or its alias -C) when non-zero, else -B and -A.
      const around = input.context || (input["-C"] ?? input.context) || 0;
      const offset = input.offset ?? 0;
      // head_limit 0 means no limit, as in Claude Code.
      const headLimit = input.head_limit === 0 ? undefined : input.head_limit;
      const window = { offset, headLimit };
      const search: GrepSearch = {
        pattern: input.pattern,
        root: resolved.path,
        workspaceRoots: context.workspaceRoots,
        globs: splitGlobs(input.glob),
        typeGlobs: types,
        caseInsensitive: input["-i"] === true,
        multiline: input.multiline === true,
        mode,
        contextBefore: around || (input["-B"] ?? 0),
        contextAfter: around || (input["-A"] ?? 0),
        onlyMatching: input["-o"] === true,
        maxLines: Math.min(GREP_MAX_CONTENT_LINES, offset + (headLimit ?? GREP_MAX_CONTENT_LINES)),
        maxFileBytes: options.maxFileBytes ?? GREP_MAX_FILE_BYTES,
        signal: context.abortController.signal,
      };
      if (!(await stat(search.root).catch(() => undefined)))
        return toolError(`Path does not exist: ${search.root}`);
      const outcome = await chooseBackend()(search);
      if (!outcome.ok) return toolError(outcome.error);
      const denied = deniedFor(context.cwd);
      const files = outcome.files
        .filter((file) => denied?.(file.path) !== true)
        .sort((left, right) => (left.path < right.path ? -1 : 1));
      const note = skippedNote(outcome.skipped, search.maxFileBytes, denied);
      switch (mode) {
        case "files_with_matches":
          return { content: (await formatFiles(files, window)) + note };
        case "count":
          return { content: formatCounts(files, window) + note };
        case "content":
          return {
            content:
              formatContent(files, {
                lineNumbers: input["-n"] !== false,
                separators: search.contextBefore > 0 || search.contextAfter > 0,
                onlyMatching: search.onlyMatching === true,
                ...window,
              }) + note,
          };
        default: {
          const unreachable: never = mode;
          throw new Error(`unknown output_mode ${String(unreachable)}`);
        }
      }
    },
  });
}

export const grepTool = createGrepTool();

/** Typed as number (as Claude Code types them) and checked whole here, naming the field. */
const WHOLE_NUMBER_FIELDS = ["-A", "-B", "-C", "context", "head_limit", "offset"] as const;

/** Which entries to show: `offset` skipped, then at most `headLimit` (none = all). */
interface EntryWindow {
  readonly offset: number;
  readonly headLimit: number | undefined;
}

function windowOf<T>(entries: readonly T[], window: EntryWindow): T[] {
  const end = window.headLimit === undefined ? entries.length : window.offset + window.headLimit;
  return entries.slice(window.offset, end);
}

function shownNote(shown: number, total: number, window: EntryWindow): string {
  if (window.offset > 0) return ` (showing ${shown} from entry ${window.offset + 1})`;
  return shown < total ? ` (showing the first ${shown})` : "";
}

async function formatFiles(files: readonly GrepFileResult[], window: EntryWindow): Promise<string> {
  if (files.length === 0) return "No files found";
  const sorted = await sortNewestFirst(files.map((file) => file.path));
  const shown = windowOf(sorted, window);
  const header = `Found ${files.length} file${files.length === 1 ? "" : "s"}`;
  return `${header}${shownNote(shown.length, files.length, window)}\n${shown.join("\n")}`;
}

function formatCounts(files: readonly GrepFileResult[], window: EntryWindow): string {
  if (files.length === 0) return "No matches found";
  const shown = windowOf(files, window);
  const total = files.reduce((sum, file) => sum + file.matchingLines, 0);
  const lines = shown.map((file) => `${file.path}:${file.matchingLines}`);
  return `${lines.join("\n")}\n\nFound ${total} total matching line${total === 1 ? "" : "s"} across ${files.length} file${files.length === 1 ? "" : "s"}.`;
}

/** ripgrep's format: `path:N:text` for matches, `path-N-text` for context, `--` between groups. */
function formatContent(
  files: readonly GrepFileResult[],
  options: EntryWindow & {
    lineNumbers: boolean;
    separators: boolean;
    onlyMatching: boolean;
  },
): string {
  const out: string[] = [];
  for (const file of files) {
    let previous: number | undefined;
    for (const line of file.lines) {
      const gap = previous === undefined ? out.length > 0 : line.lineNumber !== previous + 1;
      if (options.separators && gap) out.push("--");
      previous = line.lineNumber;
      const separator = line.isMatch ? ":" : "-";
      const number = options.lineNumbers ? `${line.lineNumber}${separator}` : "";
      const texts = options.onlyMatching && line.isMatch ? (line.parts ?? []) : [line.text];
      for (const text of texts) out.push(`${file.path}${separator}${number}${clip(text)}`);
    }
  }
  const windowed = options.offset > 0 ? out.slice(options.offset) : out;
  if (windowed.length === 0) return "No matches found";
  // Cut here, not in the backends, so that the JS backend (which stops reading once it has more
  // lines than this) and ripgrep (which reports everything) print the same thing.
  const byHeadLimit = options.headLimit !== undefined && options.headLimit <= GREP_MAX_CONTENT_LINES;
  const limit = byHeadLimit ? (options.headLimit as number) : GREP_MAX_CONTENT_LINES;
  if (windowed.length <= limit) return windowed.join("\n");
  const shown = windowed.slice(0, limit).join("\n");
  return byHeadLimit
    ? `${shown}\n\n(Showing the first ${limit} lines; head_limit cut the rest.)`
    : `${shown}\n\n(The search stopped after ${GREP_MAX_CONTENT_LINES} lines; narrow it.)`;
}

/** Says which files were not searched and why; files a deny rule hides are not named. */
function skippedNote(
  skipped: GrepSkipped | undefined,
  maxFileBytes: number,
  denied: ((path: string) => boolean) | undefined,
): string {
  if (skipped === undefined) return "";
  const visible = (paths: readonly string[]) => paths.filter((path) => denied?.(path) !== true);
  const list = (paths: readonly string[]) =>
    `${paths.slice(0, 5).join(", ")}${paths.length > 5 ? `, and ${paths.length - 5} more` : ""}`;
  const notes: string[] = [];
  const tooLarge = visible(skipped.tooLarge);
  if (tooLarge.length > 0) {
    notes.push(
      `Skipped ${tooLarge.length} file(s) larger than ${Math.round(maxFileBytes / 1024 / 1024)} MB: ${list(tooLarge)}.`,
    );
  }
  const hardLinked = visible(skipped.hardLinked);
  if (hardLinked.length > 0) {
    notes.push(
      `Skipped ${hardLinked.length} file(s) with more than one hard link (another name may be outside the workspace): ${list(hardLinked)}. Reading one with Read asks for permission.`,
    );
  }
  const outside = visible(skipped.outside);
  if (outside.length > 0)
    notes.push(
      `Skipped ${outside.length} file(s) whose real path is outside the workspace: ${list(outside)}.`,
    );
  return notes.length === 0 ? "" : `\n\n${notes.join("\n")}`;
}

function clip(text: string): string {
  if (text.length <= GREP_MAX_LINE_CHARS) return text;
  return `${text.slice(0, GREP_MAX_LINE_CHARS)}… [${text.length - GREP_MAX_LINE_CHARS} more characters]`;
}
