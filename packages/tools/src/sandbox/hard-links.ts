import { type Dirent, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** Past this many entries the walk gives up: the other names could not all be found. */
const WALK_LIMIT = 200_000;

/**
 * The other names, inside `roots`, of those `files` that have more than one hard link (R-S9): a
 * read-only bind holds one name (a file, or the files of a directory), and a second name of the same inode in the writable workspace —
 * planted before the session; the sandbox cannot make one, a link across its mounts is EXDEV —
 * would write through to it. Usually nothing to do (no execution point has a second link), so the
 * workspace is walked only when one has. Undefined when the walk passed `limit` entries.
 */
export function otherHardLinks(
  paths: readonly string[],
  roots: readonly string[],
  limit = WALK_LIMIT,
): string[] | undefined {
  const files = paths.flatMap((path) => filesAt(path, limit));
  const wanted = new Set<string>();
  for (const file of files) {
    const stats = lstatOf(file);
    if (stats?.isFile() === true && stats.nlink > 1) wanted.add(`${stats.dev}:${stats.ino}`);
  }
  if (wanted.size === 0) return [];
  const found = new Set<string>();
  const named = new Set(files);
  const pending = [...roots];
  let seen = 0;
  while (pending.length > 0) {
    const dir = pending.pop() as string;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    seen += entries.length;
    if (seen > limit) return undefined;
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile() && !named.has(path)) {
        const stats = lstatOf(path);
        if (stats !== undefined && wanted.has(`${stats.dev}:${stats.ino}`)) found.add(path);
      }
    }
  }
  return [...found].sort();
}

/** `path` itself, or the files below it when it is a directory (hooks/, .claude/): up to `limit`. */
function filesAt(path: string, limit: number): string[] {
  if (lstatOf(path)?.isDirectory() !== true) return [path];
  const files: string[] = [];
  const pending = [path];
  while (pending.length > 0 && files.length < limit) {
    const dir = pending.pop() as string;
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      // Unreadable: nothing of it to hold.
    }
    for (const entry of entries) {
      const child = join(dir, entry.name);
      if (entry.isDirectory()) pending.push(child);
      else if (entry.isFile()) files.push(child);
    }
  }
  return files;
}

function lstatOf(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}
