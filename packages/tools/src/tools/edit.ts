import { readFileSync, type Stats, statSync } from "node:fs";
import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import { writeFileAtomicSync } from "../atomic-write.js";
import { replaceInBytes } from "../byte-edit.js";
import { replaceInText } from "../edit-replace.js";
import { FILE_STATE_CURRENT, patchHunks, USER_MODIFIED_EDIT } from "../file-patch.js";
import { decodeTextFile, encodeTextFile, NEW_FILE_FORMAT, withLineEnding } from "../text-file.js";
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

/** Lines of context shown around an edit so the model sees the result without another Read. */

const editInput = lazySchema(() =>
  z.object({
    file_path: z
      .string()
      .describe("The path of the file to modify (absolute, or relative to the working directory)"),
    old_string: z
      .string()
      .describe("The exact text to replace (must be unique in the file unless replace_all)"),
    new_string: z.string().describe("The text to replace it with (must differ from old_string)"),
    replace_all: z
      .boolean()
      .default(false)
      .describe("Replace every occurrence of old_string (default false)"),
  }),
);

export const editTool = defineTool({
  name: "Edit",
  description:
    "Replaces an exact string in a file. old_string must match the file exactly (without the line-number prefix " +
    "that Read shows) and be unique unless replace_all is true. Read the file first. An empty old_string creates " +
    "a new file. The file keeps its encoding, BOM and line endings; in a file that is not valid UTF-8 (Latin-1, " +
    "Shift-JIS…) old_string and new_string must be ASCII, and every other byte is kept.",
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
    const detour = symlinkIntoProtected(input.file_path, path, context);
    if (detour !== undefined) return toolError(detour);

    // Synchronous fs: one small file, and measured ~3x faster than fs/promises per edit (bench).
    let stats: Stats;
    try {
      stats = statSync(path);
    } catch (error) {
      if (fsErrorCode(error) !== "ENOENT") {
        return toolError(`Cannot edit ${path}: ${fsErrorCode(error)}`);
      }
      if (input.old_string !== "") return toolError(`File does not exist: ${path}`);
      try {
        writeFileAtomicSync(path, encodeTextFile(input.new_string, NEW_FILE_FORMAT), {
          beneath: realWorkspaceRoots(context.workspaceRoots),
          createParents: true,
        });
      } catch (error) {
        return toolError(`Cannot write ${path}: ${fsErrorCode(error)}`);
      }
      recordWritten(context.agentState, path);
      return { content: `File created successfully at: ${path}${FILE_STATE_CURRENT}` };
    }
    if (stats.isDirectory()) return toolError(`${path} is a directory; give a file path.`);
    const refusal = staleWriteRefusal(context.agentState, path, stats);
    if (refusal !== undefined) return toolError(refusal);
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (error) {
      // The file can go between the stat and the read (another process, a swapped directory:
      // R-S4): a tool error the model can act on, not a throw out of the tool.
      return toolError(`Cannot edit ${path}: ${fsErrorCode(error)}`);
    }
    const decoded = decodeTextFile(bytes, path);
    if (!decoded.ok) return toolError(decoded.error);
    const { text, format, undecodable } = decoded;
    const request = {
      oldString: input.old_string,
      newString: input.new_string,
      replaceAll: input.replace_all === true,
    };

    let written: Buffer;
    let shown: string;
    let count: number;
    if (input.old_string === "") {
      if (text.length > 0) {
        return toolError(
          `old_string is empty but ${path} is not: give the exact text to replace, or use Write to replace the whole file.`,
        );
      }
      shown = withLineEnding(input.new_string, format.lineEnding);
      written = encodeTextFile(shown, format);
      count = 1;
    } else if (undecodable !== undefined) {
      // R-R6: never rewrite bytes the edit did not touch; a broken UTF-16 file has no byte view.
      if (format.encoding !== "utf8") {
        return toolError(
          `${path} is ${undecodable.reason}; Edit refuses it rather than rewrite it. Use Bash.`,
        );
      }
      const edited = replaceInBytes(bytes, request, undecodable.reason, path);
      if (!edited.ok)
        return toolError("refusal" in edited ? edited.refusal : notReplaced(edited, input, path));
      written = edited.bytes;
      // Shown as Read shows it (bytes that are not UTF-8 as U+FFFD); lines are the same in both views.
      shown = new TextDecoder("utf-8").decode(written);
      count = edited.replaced.count;
    } else {
      const replaced = replaceInText(text, format.lineEnding, request);
      if (!replaced.ok) return toolError(notReplaced(replaced, input, path));
      shown = replaced.updated;
      written = encodeTextFile(shown, format);
      count = replaced.count;
    }

    try {
      // Atomic, never the inode a hard link may share with an outside file, and in the directory
      // as opened from the workspace root, never through a symlink swapped in since (R-S4, R-S10).
      writeFileAtomicSync(path, written, { beneath: realWorkspaceRoots(context.workspaceRoots) });
    } catch (error) {
      return toolError(`Cannot write ${path}: ${fsErrorCode(error)}`);
    }
    recordWritten(context.agentState, path);
    // Claude Code's words (R-X1): the model has the change in context, so no snippet follows.
    const occurrences = count > 1 ? ` All ${count} occurrences were replaced.` : "";
    const userModified = context.userModified === true;
    return {
      content: userModified
        ? `The file ${path} has been updated successfully${USER_MODIFIED_EDIT}.${occurrences}`
        : `The file ${path} has been updated successfully.${occurrences}${FILE_STATE_CURRENT}`,
      // Claude Code's structured output (R-K2, R-X1): the edit asked for and the file's change.
      output: {
        filePath: path,
        oldString: input.old_string,
        newString: input.new_string,
        originalFile: text,
        structuredPatch: await patchHunks(text, shown),
        userModified,
        replaceAll: request.replaceAll,
      },
    };
  },
});

function notReplaced(
  failure: { readonly error: "not_found" | "ambiguous"; readonly count: number },
  input: { readonly old_string: string },
  path: string,
): string {
  if (failure.error === "not_found")
    return `String to replace not found in ${path}.\nString: ${input.old_string}`;
  return (
    `Found ${failure.count} matches of the string to replace, but replace_all is false. To replace all occurrences, ` +
    "set replace_all to true. To replace only one occurrence, provide more context to uniquely identify " +
    `the instance.\nString: ${input.old_string}`
  );
}
