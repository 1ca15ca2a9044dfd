import { stat } from "node:fs/promises";
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
export const GREP_MAX_LINE_CHARS = 500;
/** Content mode stops collecting after this many lines; far more than the result cap can show. */
export const GREP_MAX_CONTENT_LINES = 5_000;
/** Files above this size are skipped and named in the output (R-S4). */
export const GREP_MAX_FILE_BYTES = 20 * 1024 * 1024;

export interface GrepToolOptions extends DeniedPathsOption {
  /**
   * `auto` (default): ripgrep when `rg` is on PATH at call time, else the JavaScript backend.
   * Tests and benchmarks force `js`, or pass their own backend.
   */
  readonly backend?: "auto" | "js" | GrepBackend;
  /** Per-file size cap (default GREP_MAX_FILE_BYTES). */
  readonly maxFileBytes?: number;
}

const grepInput = z.object({
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
  "-A": z.number().int().min(0).optional().describe("Lines to show after each match (content mode)"),
  "-B": z.number().int().min(0).optional().describe("Lines to show before each match (content mode)"),
  "-C": z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Lines to show before and after each match (content mode)"),
  head_limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Show only the first N lines / files / count entries"),
  multiline: z
    .boolean()
    .optional()
    .describe("Let patterns span lines; . matches newlines (rg -U --multiline-dotall)"),
});

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
      "binary files. Filter with glob or type; output_mode content (with -A/-B/-C context and -n line numbers), " +
      "files_with_matches (default, newest first) or count; head_limit keeps the first N entries. Use multiline " +
      "for patterns that span lines.",
    inputSchema: grepInput,
    isConcurrencySafe: () => true,
    isReadOnly: () => true,
    maxResultSizeChars: 20_000,
    backfillInput: (input, context) =>
      input.path === undefined ? input : { ...input, path: absolutePath(input.path, context.cwd) },
    async call(input, context) {
      const resolved = resolveInWorkspace(input.path ?? context.cwd, context);
      if (!resolved.ok) return toolError(resolved.error);
      const types = input.type === undefined ? [] : typeGlobs(input.type);
      if ("error" in types) return toolError(types.error);
      const mode = input.output_mode ?? "files_with_matches";
      const search: GrepSearch = {
        pattern: input.pattern,
        root: resolved.path,
        workspaceRoots: context.workspaceRoots,
        globs: splitGlobs(input.glob),
        typeGlobs: types,
        caseInsensitive: input["-i"] === true,
        multiline: input.multiline === true,
        mode,
        contextBefore: input["-B"] ?? input["-C"] ?? 0,
        contextAfter: input["-A"] ?? input["-C"] ?? 0,
        maxLines: Math.min(GREP_MAX_CONTENT_LINES, input.head_limit ?? GREP_MAX_CONTENT_LINES),
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
          return { content: (await formatFiles(files, input.head_limit)) + note };
        case "count":
          return { content: formatCounts(files, input.head_limit) + note };
        case "content":
          return {
            content:
              formatContent(files, {
                lineNumbers: input["-n"] !== false,
                separators: search.contextBefore > 0 || search.contextAfter > 0,
                headLimit: input.head_limit,
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

async function formatFiles(files: readonly GrepFileResult[], headLimit: number | undefined): Promise<string> {
  if (files.length === 0) return "No files found";
  const sorted = await sortNewestFirst(files.map((file) => file.path));
  const shown = sorted.slice(0, headLimit ?? sorted.length);
  const header = `Found ${files.length} file${files.length === 1 ? "" : "s"}`;
  const limited = shown.length < files.length ? ` (showing the first ${shown.length})` : "";
  return `${header}${limited}\n${shown.join("\n")}`;
}

function formatCounts(files: readonly GrepFileResult[], headLimit: number | undefined): string {
  if (files.length === 0) return "No matches found";
  const shown = files.slice(0, headLimit ?? files.length);
  const total = files.reduce((sum, file) => sum + file.matchingLines, 0);
  const lines = shown.map((file) => `${file.path}:${file.matchingLines}`);
  return `${lines.join("\n")}\n\nFound ${total} total matching line${total === 1 ? "" : "s"} across ${files.length} file${files.length === 1 ? "" : "s"}.`;
}

/** ripgrep's format: `path:N:text` for matches, `path-N-text` for context, `--` between groups. */
function formatContent(
  files: readonly GrepFileResult[],
  options: {
    lineNumbers: boolean;
    separators: boolean;
    headLimit: number | undefined;
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
      out.push(`${file.path}${separator}${number}${clip(line.text)}`);
    }
  }
  if (out.length === 0) return "No matches found";
  // Cut here, not in the backends, so that the JS backend (which stops reading once it has more
  // lines than this) and ripgrep (which reports everything) print the same thing.
  const byHeadLimit = options.headLimit !== undefined && options.headLimit <= GREP_MAX_CONTENT_LINES;
  const limit = byHeadLimit ? (options.headLimit as number) : GREP_MAX_CONTENT_LINES;
  if (out.length <= limit) return out.join("\n");
  const shown = out.slice(0, limit).join("\n");
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
