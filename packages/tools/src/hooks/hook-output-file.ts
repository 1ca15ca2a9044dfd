import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promptHookLabel } from "@forkloop/loop-core";

/**
 * R-X1: the longest hook text Claude Code 2.1.332 hands the model as it is (claude-cli scenario
 * hook-long-context: 10,000 characters stay, 10,001 do not). Longer text is saved to a file of
 * the session's and the model gets its first 2,000 characters and the file's path instead.
 */
const HOOK_CONTEXT_INLINE_CHARS = 10_000;
const PREVIEW_CHARS = 2_000;

/** Where a hook's text came from: a JSON answer's `additionalContext`, or plain stdout. */
export type HookTextSource = "additionalContext" | "stdout";

/**
 * A hook's text for the model as Claude Code gives it, a settings hook's or a program's callback's
 * alike: after its event's words (promptHookLabel: SessionStart's, SubagentStart's, UserPromptSubmit's and
 * UserPromptExpansion's), the text
 * as it is up to HOOK_CONTEXT_INLINE_CHARS; longer, saved whole under the session's directory
 * (`<transcript without extension>/tool-results/`) and replaced by Claude Code's
 * `<persisted-output>` block (its size, the file, a preview). Without a transcript (nowhere to
 * keep it) or when the file cannot be written, the text stays whole.
 */
export function hookTextForModel(
  text: string,
  where: {
    readonly transcriptPath: string | undefined;
    readonly event: string;
    readonly source: HookTextSource;
    /** SessionStart's source ("startup", "resume" …), named in its plain stdout's words. */
    readonly sessionSource?: string | undefined;
  },
): string {
  return promptHookLabel(where.event, where.source, where.sessionSource) + kept(text, where);
}

function kept(text: string, where: Parameters<typeof hookTextForModel>[1]): string {
  if (text.length <= HOOK_CONTEXT_INLINE_CHARS || !where.transcriptPath) return text;
  const dir = join(where.transcriptPath.replace(/\.[^./]+$/, ""), "tool-results");
  const name =
    where.source === "stdout"
      ? `hook-${randomUUID()}-stdout.txt`
      : `hook-${randomUUID()}-${where.event}-additionalContext.txt`;
  const file = join(dir, name);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, text);
  } catch {
    return text;
  }
  const size = `${(Buffer.byteLength(text) / 1024).toFixed(1)}KB`;
  // The preview ends at the last line break within it when that keeps more than half of it.
  const head = text.slice(0, PREVIEW_CHARS);
  const lineEnd = head.lastIndexOf("\n");
  const preview = lineEnd > PREVIEW_CHARS / 2 ? head.slice(0, lineEnd) : head;
  return (
    `<persisted-output>\nOutput too large (${size}). Full output saved to: ${file}\n\n` +
    `Preview (first 2KB):\n${preview}\n...\n</persisted-output>`
  );
}
