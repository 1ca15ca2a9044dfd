import { closeSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import { existingBackgroundShells } from "../background/background-shells.js";
import { openConfined } from "../confined-open.js";
import { detectImage, MAX_IMAGE_BYTES } from "../image-file.js";
import { isPdf, PDF_MAX_PAGES_PER_READ, PDF_WHOLE_MAX_PAGES } from "../pdf/pdf-pages.js";
import { decodeTextFile } from "../text-file.js";
import { absolutePath, defineTool, numberLines, recordRead, toolError } from "../tool-kit.js";
import { realWorkspaceRoots, resolveInWorkspace } from "../workspace-paths.js";
import { parseNotebook, renderNotebook } from "./notebook-edit.js";

const READ_DEFAULT_LINE_LIMIT = 2000;
const READ_MAX_LINE_CHARS = 2000;
/** Files larger than this are refused whole; the model should page with offset/limit or use Bash. */
const READ_MAX_FILE_BYTES = 64 * 1024 * 1024;
/**
 * With `allow_large` (Claude Code's input): no default line limit and no line truncation, up to
 * this many characters shown (≈100k tokens, half the smallest context window), so the result
 * still fits in the conversation; over it, the call is refused with the way to read in parts.
 */
export const READ_ALLOW_LARGE_MAX_CHARS = 400_000;

const readInput = lazySchema(() =>
  z.object({
    file_path: z
      .string()
      .describe("The path of the file to read (absolute, or relative to the working directory)"),
    offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        "The line number to start reading from (1-based). Only provide if the file is too large to read at once",
      ),
    limit: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(`The number of lines to read (default ${READ_DEFAULT_LINE_LIMIT})`),
    pages: z
      .string()
      .max(32)
      .optional()
      .describe(
        `Page range for PDF files (e.g., "1-5", "3", "10-20"). Only applicable to PDF files. Maximum ${PDF_MAX_PAGES_PER_READ} pages per request.`,
      ),
    allow_large: z
      .boolean()
      .optional()
      .describe(
        `Set to true to read a text file, or a line range of one, that is over the usual limits (${READ_DEFAULT_LINE_LIMIT} lines, ` +
          `${READ_MAX_LINE_CHARS} characters a line), up to ${READ_ALLOW_LARGE_MAX_CHARS} characters. Only use this when you ` +
          "genuinely need all of it or the user asked for the whole file; otherwise read it in parts with offset and limit, or search it.",
      ),
  }),
);

export const readTool = defineTool({
  name: "Read",
  description:
    "Reads a text file from the workspace. Each line is numbered (line number, tab, text). " +
    `By default up to ${READ_DEFAULT_LINE_LIMIT} lines from the start; use offset and limit for long files. ` +
    `Lines longer than ${READ_MAX_LINE_CHARS} characters are truncated. Images (PNG, JPEG, GIF, WebP) are ` +
    `shown as images; PDFs go to you as documents (up to ${PDF_WHOLE_MAX_PAGES} pages whole, else give pages, ` +
    `at most ${PDF_MAX_PAGES_PER_READ} a call); other binary files are refused. ` +
    "Read a file before editing or overwriting it.",
  inputSchema: readInput,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  // Read limits itself (line count and line length), so the generic result cap exempts it (R-T3).
  maxResultSizeChars: Number.POSITIVE_INFINITY,
  backfillInput: (input, context) => ({ ...input, file_path: absolutePath(input.file_path, context.cwd) }),
  async call(input, context) {
    // A background command's output file (R-T4) lies outside the workspace, in this agent's own
    // private directory: Read reads exactly those files there, judged as any other by what opens.
    const ownOutput = existingBackgroundShells(context.agentState)?.byOutputFile(input.file_path);
    const resolved = ownOutput
      ? { ok: true as const, path: ownOutput.outputFile }
      : resolveInWorkspace(input.file_path, context);
    if (!resolved.ok) return toolError(resolved.error);
    const path = resolved.path;

    // Synchronous fs on one descriptor: stat and content come from the same open file, and it
    // measured ~2x faster than fs/promises (bench/src/tools.bench.ts). Opened once and judged by
    // what was opened (no symlink at the end, the descriptor's real path inside the workspace), so
    // a symlink swapped in after the check above reads nothing (R-S4).
    const opened = openConfined(
      path,
      ownOutput ? [dirname(path)] : realWorkspaceRoots(context.workspaceRoots),
    );
    if (!opened.ok) {
      switch (opened.problem) {
        case "missing":
          // Claude Code's words (R-X1): the model named the path; the working directory is what it may have missed.
          return toolError(`File does not exist. Note: your current working directory is ${context.cwd}.`);
        case "symlink":
        case "outside":
          return toolError(
            `${path} changed while it was being opened (it now leads outside the workspace or is a symlink); Read refuses it.`,
          );
        default:
          return toolError(`Cannot open ${path}: ${opened.code ?? "unknown error"}`);
      }
    }
    const { fd, stats } = opened;
    try {
      if (stats.isDirectory()) return toolError(`${path} is a directory; use the LS tool to list it.`);
      if (!stats.isFile()) return toolError(`${path} is not a regular file; Read refuses it.`);
      if (stats.size > READ_MAX_FILE_BYTES) {
        return toolError(
          `${path} is ${stats.size} bytes, more than the ${READ_MAX_FILE_BYTES}-byte limit of Read. ` +
            "Use Grep to find the part you need, or Bash with head/tail/sed -n.",
        );
      }
      const bytes = readFileSync(fd);
      // R-T7: a PDF goes to the model as a document block (the pages asked, or the whole short file).
      if (isPdf(bytes)) {
        // Off this thread, with a deadline: a hostile PDF cannot stop the run (R-S12).
        // Its thread's module loads at the first PDF read (R-V2: not with the SDK).
        const { pdfForReadOffThread } = await import("../pdf/pdf-thread.js");
        const pdf = await pdfForReadOffThread(bytes, path, input.pages, {
          signal: context.abortController.signal,
        });
        if (!pdf.ok) return toolError(pdf.error);
        recordRead(context.agentState, path, stats);
        return {
          content: [
            {
              type: "text",
              text: `PDF ${path}: pages ${pdf.first}-${pdf.last} of ${pdf.total} (${pdf.data.length} bytes sent).`,
            },
            {
              type: "document",
              source: { type: "base64", media_type: "application/pdf", data: pdf.data.toString("base64") },
            },
          ],
        };
      }
      if (input.pages !== undefined) {
        return toolError(
          `pages applies to PDF files only; ${path} is not a PDF. Use offset and limit for lines.`,
        );
      }
      // Images go to the model as image blocks, as Claude Code's Read does (PNG, JPEG, GIF, WebP).
      const mediaType = detectImage(bytes);
      if (mediaType !== undefined) {
        if (bytes.length > MAX_IMAGE_BYTES) {
          return toolError(
            `${path} is a ${bytes.length}-byte image, over the API's ${MAX_IMAGE_BYTES}-byte limit. ` +
              "Make a smaller copy with Bash (e.g. ImageMagick `convert -resize`) and Read that.",
          );
        }
        recordRead(context.agentState, path, stats);
        return {
          content: [
            { type: "text", text: `Image ${path} (${mediaType}, ${bytes.length} bytes):` },
            {
              type: "image",
              source: { type: "base64", media_type: mediaType, data: bytes.toString("base64") },
            },
          ],
        };
      }
      const decoded = decodeTextFile(bytes, path);
      if (!decoded.ok) return toolError(decoded.error);
      // Recorded from the same descriptor, so Write/Edit compare against exactly what was read.
      recordRead(context.agentState, path, stats);

      if (decoded.text.length === 0) {
        return {
          content: `<system-reminder>Warning: ${path} exists but its contents are empty.</system-reminder>`,
        };
      }
      // A Jupyter notebook is shown as its cells, with the ids NotebookEdit takes (R-T7).
      if (path.endsWith(".ipynb")) {
        const notebook = parseNotebook(decoded.text, path);
        if (typeof notebook !== "string") return { content: renderNotebook(notebook) };
      }
      // Lines as Claude Code counts them (R-X1): a file ending in a newline has an empty last line.
      const lines = decoded.text.split("\n");
      const start = Math.max(1, input.offset ?? 1);
      const large = input.allow_large === true;
      const limit = input.limit ?? (large ? Number.POSITIVE_INFINITY : READ_DEFAULT_LINE_LIMIT);
      if (start > lines.length) {
        return {
          content:
            `<system-reminder>Warning: ${path} is shorter than the provided offset (${start}). ` +
            `The file has ${lines.length} lines.</system-reminder>`,
        };
      }
      const end = Math.min(lines.length, start - 1 + limit);
      let truncatedLines = 0;
      const shown = lines.slice(start - 1, end).map((raw) => {
        const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
        if (large || line.length <= READ_MAX_LINE_CHARS) return line;
        truncatedLines++;
        return `${line.slice(0, READ_MAX_LINE_CHARS)}… [line truncated, ${line.length - READ_MAX_LINE_CHARS} more characters]`;
      });

      const notes: string[] = [];
      if (start > 1 || end < lines.length) {
        const more = end < lines.length ? ` Use offset=${end + 1} to read more.` : "";
        notes.push(`Showing lines ${start}-${end} of ${lines.length}.${more}`);
      }
      if (truncatedLines > 0) {
        notes.push(`${truncatedLines} line(s) longer than ${READ_MAX_LINE_CHARS} characters were truncated.`);
      }
      if (decoded.undecodable) {
        // R-R6: say what was shown — the U+FFFD are not in the file.
        notes.push(
          `This file is ${decoded.undecodable.reason}; bytes that do not decode are shown as \uFFFD. Edit changes it only with ASCII old_string and new_string, keeping every other byte.`,
        );
      }
      const body = numberLines(shown, start);
      if (large && body.length > READ_ALLOW_LARGE_MAX_CHARS) {
        return toolError(
          `Lines ${start}-${end} of ${path} are ${body.length} characters, over the ${READ_ALLOW_LARGE_MAX_CHARS} ` +
            "characters allow_large may show. Read it in parts with offset and limit, or search it with Grep.",
        );
      }
      return {
        content: notes.length === 0 ? body : `${body}\n\n(${notes.join(" ")})`,
        output: readOutput(path, lines, start, end),
      };
    } finally {
      closeSync(fd);
    }
  },
});

/**
 * Read's structured output as Claude Code gives it (`tool_use_result`, PostToolUse's
 * `tool_response`; R-K2, R-X1): lines `startLine`..`endLine` as they are in the file.
 */
function readOutput(filePath: string, lines: readonly string[], startLine: number, endLine: number) {
  const slice = lines.slice(startLine - 1, endLine);
  return {
    type: "text",
    file: {
      filePath,
      content: slice.join("\n"),
      numLines: slice.length,
      startLine,
      totalLines: lines.length,
    },
  } as const;
}
