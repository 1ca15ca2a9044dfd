import { mkdirSync, readFileSync, type Stats, statSync } from "node:fs";
import { dirname } from "node:path";
import { z } from "zod";
import { writeFileAtomicSync } from "../atomic-write.js";
import { decodeTextFile, encodeTextFile, NEW_FILE_FORMAT, withLineEnding } from "../text-file.js";
import {
  absolutePath,
  defineTool,
  fsErrorCode,
  numberLines,
  recordRead,
  staleWriteRefusal,
  toolError,
} from "../tool-kit.js";
import { resolveInWorkspace } from "../workspace-paths.js";

/** Lines of context shown around an edit so the model sees the result without another Read. */
const SNIPPET_CONTEXT_LINES = 4;

const editInput = z.object({
  file_path: z
    .string()
    .describe("The path of the file to modify (absolute, or relative to the working directory)"),
  old_string: z
    .string()
    .describe("The exact text to replace (must be unique in the file unless replace_all)"),
  new_string: z.string().describe("The text to replace it with (must differ from old_string)"),
  replace_all: z.boolean().optional().describe("Replace every occurrence of old_string (default false)"),
});

export const editTool = defineTool({
  name: "Edit",
  description:
    "Replaces an exact string in a file. old_string must match the file exactly (without the line-number prefix " +
    "that Read shows) and be unique unless replace_all is true. Read the file first. An empty old_string creates " +
    "a new file. The file keeps its encoding, BOM and line endings.",
  inputSchema: editInput,
  isConcurrencySafe: () => false,
  isReadOnly: () => false,
  maxResultSizeChars: 100_000,
  backfillInput: (input, context) => ({ ...input, file_path: absolutePath(input.file_path, context.cwd) }),
  async call(input, context) {
    if (input.old_string === input.new_string) {
      return toolError("No changes to make: old_string and new_string are exactly the same.");
    }
    const resolved = resolveInWorkspace(input.file_path, context);
    if (!resolved.ok) return toolError(resolved.error);
    const path = resolved.path;

    // Synchronous fs: one small file, and measured ~3x faster than fs/promises per edit (bench).
    let stats: Stats;
    try {
      stats = statSync(path);
    } catch (error) {
      if (fsErrorCode(error) !== "ENOENT") {
        return toolError(`Cannot edit ${path}: ${fsErrorCode(error)}`);
      }
      if (input.old_string !== "") return toolError(`File does not exist: ${path}`);
      mkdirSync(dirname(path), { recursive: true });
      writeFileAtomicSync(path, encodeTextFile(input.new_string, NEW_FILE_FORMAT));
      recordRead(context.agentState, path, statSync(path));
      return { content: `File created successfully at: ${path}` };
    }
    if (stats.isDirectory()) return toolError(`${path} is a directory; give a file path.`);
    const refusal = staleWriteRefusal(context.agentState, path, stats);
    if (refusal !== undefined) return toolError(refusal);
    const decoded = decodeTextFile(readFileSync(path), path);
    if (!decoded.ok) return toolError(decoded.error);
    const { text, format } = decoded;

    let updated: string;
    let firstChangeAt: number;
    let replacement: string;
    let count = 1;
    if (input.old_string === "") {
      if (text.length > 0) {
        return toolError(
          `old_string is empty but ${path} is not: give the exact text to replace, or use Write to replace the whole file.`,
        );
      }
      replacement = withLineEnding(input.new_string, format.lineEnding);
      updated = replacement;
      firstChangeAt = 0;
    } else {
      // The model writes "\n"; in a CRLF file the same text is stored with "\r\n" (issue 4).
      const target = findTarget(text, input.old_string, format.lineEnding);
      if (target === undefined) {
        return toolError(`String to replace not found in ${path}.\nString: ${input.old_string}`);
      }
      count = target.count;
      if (count > 1 && input.replace_all !== true) {
        return toolError(
          `Found ${count} matches of the string to replace, but replace_all is false. To replace all occurrences, ` +
            "set replace_all to true. To replace only one occurrence, provide more context to uniquely identify " +
            `the instance.\nString: ${input.old_string}`,
        );
      }
      replacement = target.crlf ? withLineEnding(input.new_string, "\r\n") : input.new_string;
      firstChangeAt = text.indexOf(target.needle);
      // split/join rather than String.replace: `$&` and friends in new_string must stay literal.
      updated =
        input.replace_all === true
          ? text.split(target.needle).join(replacement)
          : text.slice(0, firstChangeAt) + replacement + text.slice(firstChangeAt + target.needle.length);
    }

    try {
      // Atomic, and never the inode a hard link may share with an outside file (R-S4).
      writeFileAtomicSync(path, encodeTextFile(updated, format));
    } catch (error) {
      return toolError(`Cannot write ${path}: ${fsErrorCode(error)}`);
    }
    recordRead(context.agentState, path, statSync(path));
    const summary =
      count > 1
        ? `The file ${path} has been updated. All ${count} occurrences were replaced.`
        : `The file ${path} has been updated.`;
    return {
      content: `${summary} Here is a snippet of the edited file:\n${snippet(updated, firstChangeAt, replacement)}`,
    };
  },
});

function findTarget(
  text: string,
  oldString: string,
  lineEnding: "\n" | "\r\n",
): { needle: string; count: number; crlf: boolean } | undefined {
  const candidates =
    lineEnding === "\r\n" && oldString.includes("\n")
      ? [
          { needle: withLineEnding(oldString, "\r\n"), crlf: true },
          { needle: oldString, crlf: false },
        ]
      : [{ needle: oldString, crlf: false }];
  for (const candidate of candidates) {
    const count = countOccurrences(text, candidate.needle);
    if (count > 0) return { ...candidate, count };
  }
  return undefined;
}

export function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length))
    count++;
  return count;
}

function snippet(text: string, changeAt: number, replacement: string): string {
  const lines = text.split("\n").map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
  const firstLine = text.slice(0, changeAt).split("\n").length;
  const lastLine = firstLine + replacement.split("\n").length - 1;
  const from = Math.max(1, firstLine - SNIPPET_CONTEXT_LINES);
  const to = Math.min(lines.length, lastLine + SNIPPET_CONTEXT_LINES);
  return numberLines(lines.slice(from - 1, to), from);
}
