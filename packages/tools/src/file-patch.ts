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

/**
 * Claude Code's notes when the permission asker changed the input before allowing it (R-X1), in
 * place of FILE_STATE_CURRENT: the model's context does not hold what was written. Write's
 * follows its sentence; Edit's comes before the sentence's period, as Claude Code 2.1.332 words it.
 */
export const USER_MODIFIED_WRITE = " The user modified your proposed content before accepting it.";
export const USER_MODIFIED_EDIT = ".  The user modified your proposed changes before accepting them. ";

/** Lines of context around each change: Claude Code's, so the hunks are the same as its (R-X1). */
const CONTEXT_LINES = 3;

/**
 * The hunks that turn `before` into `after` (jsdiff's structured patch, as Claude Code computes it),
 * for Edit's and Write's structured output (R-K2, R-X1). jsdiff (19 modules) loads at the first
 * edit, not with the package: importing the SDK loads only what a session needs first (R-V2).
 */
export async function patchHunks(before: string, after: string): Promise<PatchHunk[]> {
  const { structuredPatch } = await import("diff");
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
