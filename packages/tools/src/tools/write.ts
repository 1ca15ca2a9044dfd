import { readFile, stat } from "node:fs/promises";
import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import { writeFileAtomicSync } from "../atomic-write.js";
import { isAscii } from "../byte-edit.js";
import { FILE_STATE_CURRENT, patchHunks, USER_MODIFIED_WRITE } from "../file-patch.js";
import {
  decodeTextFile,
  encodeTextFile,
  NEW_FILE_FORMAT,
  type TextFormat,
  withLineEnding,
} from "../text-file.js";
import {
  absolutePath,
  defineTool,
  fsErrorCode,
  recordWritten,
  staleWriteRefusal,
  symlinkIntoProtected,
  toolError,
} from "../tool-kit.js";
import { realWorkspaceRoots, resolveInWorkspace } from "../workspace-paths.js";

const writeInput = lazySchema(() =>
  z.object({
    file_path: z
      .string()
      .describe("The path of the file to write (absolute, or relative to the working directory)"),
    content: z.string().describe("The full content to write to the file"),
  }),
);

export const writeTool = defineTool({
  name: "Write",
  description:
    "Writes a file in the workspace, creating parent directories as needed. Overwriting an existing file " +
    "requires reading it first with Read in this session; an existing file keeps its encoding, BOM and line endings " +
    "(into a file that is not valid UTF-8, only ASCII is written). " +
    "Prefer Edit for changes to existing files.",
  inputSchema: writeInput,
  isConcurrencySafe: () => false,
  isReadOnly: () => false,
  maxResultSizeChars: 100_000,
  backfillInput: (input, context) => ({ ...input, file_path: absolutePath(input.file_path, context.cwd) }),
  async call(input, context) {
    const resolved = resolveInWorkspace(input.file_path, context);
    if (!resolved.ok) return toolError(resolved.error);
    const path = resolved.path;
    const detour = symlinkIntoProtected(input.file_path, path, context);
    if (detour !== undefined) return toolError(detour);

    let format: TextFormat = NEW_FILE_FORMAT;
    let existed = false;
    let original: string | null = null;
    try {
      const stats = await stat(path);
      if (stats.isDirectory()) return toolError(`${path} is a directory; give a file path.`);
      existed = true;
      const refusal = staleWriteRefusal(context.agentState, path, stats);
      if (refusal !== undefined) return toolError(refusal);
      const decoded = decodeTextFile(await readFile(path), path);
      if (decoded.ok) {
        format = decoded.format;
        original = decoded.text;
      }
      // R-R6: the file's legacy encoding is unknown, so non-ASCII text cannot be written in it;
      // as UTF-8 it would silently change the file's encoding.
      if (
        decoded.ok &&
        decoded.undecodable &&
        decoded.format.encoding === "utf8" &&
        !isAscii(input.content)
      ) {
        return toolError(
          `${path} is ${decoded.undecodable.reason}. Write would store the new content as UTF-8, changing the file's encoding: write ASCII only, or convert the file to UTF-8 first (e.g. \`iconv -f latin1 -t utf-8\`) and then Write it.`,
        );
      }
    } catch (error) {
      if (fsErrorCode(error) !== "ENOENT") {
        return toolError(`Cannot write ${path}: ${fsErrorCode(error)}`);
      }
    }

    // An overwritten CRLF file stays CRLF: the model writes "\n" and would otherwise flip every line.
    const text = existed ? withLineEnding(input.content, format.lineEnding) : input.content;
    try {
      // A new file renamed over the target: never the inode a hard link may share with an outside
      // file; in its directory as opened from the workspace root, never through a symlink swapped
      // in since the check (R-S4, R-S10).
      writeFileAtomicSync(path, encodeTextFile(text, format), {
        beneath: realWorkspaceRoots(context.workspaceRoots),
        createParents: true,
      });
    } catch (error) {
      return toolError(`Cannot write ${path}: ${fsErrorCode(error)}`);
    }
    // What this agent just wrote is what it has seen: a following Edit needs no extra Read.
    recordWritten(context.agentState, path);
    const userModified = context.userModified === true;
    const note = userModified ? USER_MODIFIED_WRITE : FILE_STATE_CURRENT;
    return {
      // Claude Code's words (R-X1): what was written is what the model has in context, unless
      // the permission asker changed it.
      content: existed
        ? `The file ${path} has been updated successfully.${note}`
        : `File created successfully at: ${path}${note}`,
      // Claude Code's structured output (R-K2, R-X1): what was written and how it changed the file.
      output: {
        type: existed ? "update" : "create",
        filePath: path,
        content: input.content,
        structuredPatch: original === null ? [] : await patchHunks(original, input.content),
        originalFile: original,
        userModified,
      },
    };
  },
});
