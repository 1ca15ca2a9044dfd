import { structuredPatch } from "diff";

/** One hunk of a change, as Claude Code's Edit and Write report it (`structuredPatch`). */
export interface PatchHunk {
  readonly oldStart: number;
  readonly oldLines: number;
  readonly newStart: number;
  readonly newLines: number;
  readonly lines: readonly string[];
}

/** Claude Code's note after a write (R-X1): what was written is what the model has in context. */
export const FILE_STATE_CURRENT = " (file state is current in your context — no need to Read it back)";

/** Lines of context around each change: Claude Code's, so the hunks are the same as its (R-X1). */
const CONTEXT_LINES = 3;

/**
 * The hunks that turn `before` into `after` (jsdiff's structured patch, as Claude Code computes it),
 * for Edit's and Write's structured output (R-K2, R-X1).
 */
export function patchHunks(before: string, after: string): PatchHunk[] {
  return structuredPatch("", "", before, after, undefined, undefined, { context: CONTEXT_LINES }).hunks.map(
    ({ oldStart, oldLines, newStart, newLines, lines }) => ({
      oldStart,
      oldLines,
      newStart,
      newLines,
      lines,
    }),
  );
}
