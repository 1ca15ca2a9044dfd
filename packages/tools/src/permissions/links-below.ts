import { type Dirent, lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";

/** Entries a recursive Bash read may have checked below one directory before it needs approval instead. */
const MAX_ENTRIES_CHECKED = 20_000;

export interface LinksBelowOptions {
  /** The read follows symlinks below the directory (`diff -r` does; `grep -r`, `rg`, `git grep` do not). */
  readonly throughSymlinks: boolean;
  /** Whether a real path is inside the workspace. */
  readonly inside: (realPath: string) => boolean;
  readonly maxEntries?: number;
}

/**
 * Why a recursive read of `dir`'s file contents (`grep -r`, `rg`, `git grep`, `diff -r`) may print a
 * file outside the workspace, or undefined (R-S4): a regular file below it with more than one hard
 * link (the other name may be outside), or, for reads that follow symlinks, a symlink that leads
 * out. A tree too large to check needs approval too. Symlinked directories inside the workspace
 * are walked where they lead (once each) when the read follows them.
 */
export function outsideInodeBelow(dir: string, options: LinksBelowOptions): string | undefined {
  const maxEntries = options.maxEntries ?? MAX_ENTRIES_CHECKED;
  const pending = [dir];
  const walked = new Set<string>();
  let seen = 0;
  while (pending.length > 0) {
    const current = pending.pop() as string;
    if (walked.has(current)) continue;
    walked.add(current);
    let entries: Dirent[];
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      continue; // Not a directory, or unreadable: the command cannot read below it either.
    }
    for (const entry of entries) {
      if (++seen > maxEntries)
        return `it reads the contents of more than ${maxEntries} entries below ${dir}, too many to check for hard links`;
      const path = join(current, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) {
        const links = linkCount(path);
        if (links > 1)
          return `it reads ${path}, which has ${links} hard links: it may be a file outside the workspace`;
      } else if (entry.isSymbolicLink() && options.throughSymlinks) {
        const real = realPathOf(path);
        if (real === undefined || !options.inside(real))
          return `it follows the symlink ${path} out of the workspace`;
        if (isDirectory(real)) pending.push(real);
        else if (linkCount(real) > 1)
          return `it reads ${real} (through ${path}), which has hard links: it may be a file outside the workspace`;
      }
    }
  }
  return undefined;
}

function linkCount(path: string): number {
  try {
    return lstatSync(path).nlink;
  } catch {
    return 1;
  }
}

function realPathOf(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
