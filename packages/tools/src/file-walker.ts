import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { GitignoreFilter } from "./gitignore.js";

export interface WalkOptions {
  readonly filter: GitignoreFilter;
  readonly signal?: AbortSignal;
  /** Skip names starting with "." (LS does, like Claude Code's; Grep and Glob search them). */
  readonly skipHidden?: boolean;
  /** Stop after this many files (the caller then reports a truncated listing). */
  readonly maxFiles?: number;
  /**
   * Decides an entry before .gitignore does: true = keep (even if gitignored), false = skip (a
   * directory is not walked), undefined = .gitignore decides. Grep's `glob` overrides (ripgrep's).
   */
  readonly decide?: (path: string, isDirectory: boolean) => boolean | undefined;
}

/**
 * All regular files under `root`, depth first in name order, pruning ignored directories so a
 * gitignored `node_modules` costs nothing. Symlinks are not followed (ripgrep's default), so a
 * walk never leaves the workspace through a link.
 */
export async function walkFiles(
  root: string,
  options: WalkOptions,
): Promise<{ files: string[]; truncated: boolean }> {
  const files: string[] = [];
  const maxFiles = options.maxFiles ?? Number.POSITIVE_INFINITY;
  const pending = [root];
  while (pending.length > 0) {
    if (options.signal?.aborted === true) break;
    const dir = pending.pop() as string;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue; // Unreadable directories are skipped, as ripgrep does.
    }
    entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    const subdirs: string[] = [];
    const isIgnored = options.filter.forDirectory(dir);
    for (const entry of entries) {
      if (options.skipHidden === true && entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (options.decide?.(path, true) ?? !isIgnored(entry.name, true)) subdirs.push(path);
      } else if (entry.isFile() && (options.decide?.(path, false) ?? !isIgnored(entry.name, false))) {
        if (files.length >= maxFiles) return { files, truncated: true };
        files.push(path);
      }
    }
    // Reversed so the stack pops them in name order.
    pending.push(...subdirs.reverse());
  }
  files.sort();
  return { files, truncated: false };
}
