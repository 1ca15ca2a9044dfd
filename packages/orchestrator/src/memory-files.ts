import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";

/** Memory file names read at every level, in this order (§1.2 prefetch). */
export const MEMORY_FILE_NAMES = ["CLAUDE.md", "AGENTS.md", "MEMORY.md"] as const;

export interface MemoryFile {
  readonly path: string;
  readonly content: string;
  readonly scope: "user" | "project";
}

async function readIfPresent(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EISDIR" || code === "ENOTDIR") return null;
    throw error;
  }
}

/** Directories from `stopAt` down to `cwd` (both included); just `cwd` when it is not inside `stopAt`. */
export function directoryChain(cwd: string, stopAt: string | null): string[] {
  const start = resolve(cwd);
  const chain = [start];
  if (stopAt === null) return chain;
  const root = resolve(stopAt);
  let current = start;
  while (current !== root) {
    const parent = dirname(current);
    if (parent === current) return [start]; // cwd is not below stopAt
    current = parent;
    chain.push(current);
  }
  return chain.reverse();
}

/**
 * Reads the memory files that apply to `cwd`: the user's (`~/.claude/CLAUDE.md`,
 * `~/.forkloop/<name>`) first, then each directory from the repository root down to `cwd`, so
 * the most specific instructions come last.
 */
export async function readMemoryFiles(options: {
  cwd: string;
  repoRoot: string | null;
  home?: string;
}): Promise<MemoryFile[]> {
  const candidates: { path: string; scope: MemoryFile["scope"] }[] = [];
  if (options.home !== undefined) {
    candidates.push({ path: join(options.home, ".claude", "CLAUDE.md"), scope: "user" });
    for (const name of MEMORY_FILE_NAMES)
      candidates.push({ path: join(options.home, ".forkloop", name), scope: "user" });
  }
  for (const dir of directoryChain(options.cwd, options.repoRoot)) {
    for (const name of MEMORY_FILE_NAMES) candidates.push({ path: join(dir, name), scope: "project" });
  }
  const contents = await Promise.all(candidates.map((candidate) => readIfPresent(candidate.path)));
  const files: MemoryFile[] = [];
  candidates.forEach((candidate, index) => {
    const content = contents[index];
    if (content !== null && content !== undefined && content.trim().length > 0) {
      files.push({ path: candidate.path, content, scope: candidate.scope });
    }
  });
  return files;
}
