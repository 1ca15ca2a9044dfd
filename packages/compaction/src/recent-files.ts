import { estimateTextTokens, type Message } from "@forkloop/loop-core";
import { indexToolUses } from "./message-shape.js";
import { touchedPath } from "./microcompact.js";

/** Tools whose `file_path` names one file the agent read or changed (not directories or globs). */
const FILE_TOOLS = new Set(["Read", "Write", "Edit", "MultiEdit", "NotebookEdit"]);

/** Files touched by tool calls in `messages`, most recently touched first, without repeats. */
export function recentlyTouchedFiles(messages: readonly Message[]): readonly string[] {
  const uses = [...indexToolUses(messages).values()].sort((a, b) => b.messageIndex - a.messageIndex);
  const files: string[] = [];
  for (const use of uses) {
    if (!FILE_TOOLS.has(use.name)) continue;
    const path = touchedPath(use.input);
    if (path !== undefined && !files.includes(path)) files.push(path);
  }
  return files;
}

export interface AttachedFile {
  readonly path: string;
  readonly content: string;
  readonly tokens: number;
}

/**
 * After compaction the model no longer sees the files it was working on; re-read the most
 * recently touched ones from disk (their current content, not a stale tool result) while they
 * fit in `maxTokens`. Files that vanished or do not fit are skipped.
 */
export async function attachRecentFiles(
  paths: readonly string[],
  options: { readonly maxTokens: number; readFile(path: string): Promise<string | null> },
): Promise<readonly AttachedFile[]> {
  const attached: AttachedFile[] = [];
  let budget = options.maxTokens;
  for (const path of paths) {
    if (budget <= 0) break;
    const content = await options.readFile(path);
    if (content === null) continue;
    const tokens = estimateTextTokens(content) + estimateTextTokens(path) + 8;
    if (tokens > budget) continue;
    attached.push({ path, content, tokens });
    budget -= tokens;
  }
  return attached;
}

export function formatAttachedFiles(files: readonly AttachedFile[]): string {
  return files.map((file) => `<file path="${file.path}">\n${file.content}\n</file>`).join("\n");
}
