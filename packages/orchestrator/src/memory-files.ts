import { dirname, join, resolve } from "node:path";
import type { InstructionsLoadedInput } from "@forkloop/loop-core";
import { INSTRUCTION_FILE_MAX_BYTES, readProjectFile } from "@forkloop/tools";
import { MAX_IMPORT_DEPTH, memoryImports } from "./memory-imports.js";

/** Memory file names read at every level, in this order (§1.2 prefetch). */
const MEMORY_FILE_NAMES = ["CLAUDE.md", "AGENTS.md", "MEMORY.md"] as const;

export interface MemoryFile {
  readonly path: string;
  readonly content: string;
  readonly scope: "user" | "project";
  /** The memory file whose `@path` brought this one in. */
  readonly importedBy?: string;
}

export interface MemoryFilesRead {
  readonly files: MemoryFile[];
  /** Files found and not read (R-S8), each a line naming the file, the reason and how to allow it. */
  readonly refused: string[];
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
 * the most specific instructions come last. Each file's `@path` imports follow it. With the files,
 * what was refused. R-S8: a memory file goes into every system prompt, so
 * it is read as Read reads a file: its real path inside the workspace (the repository, else
 * `cwd`) — the user's own files inside their home — a regular file with one link, at most
 * INSTRUCTION_FILE_MAX_BYTES, judged on the opened descriptor. A committed `CLAUDE.md ->
 * /proc/self/environ` would otherwise send the environment, API key included, with no tool call.
 */
export async function readMemoryFilesDetailed(options: {
  cwd: string;
  repoRoot: string | null;
  home?: string;
  /** False: not the user's nor the project's own (the additional directories' only). Default true. */
  ownFiles?: boolean;
  /**
   * Directories given besides the project (`--add-dir`) whose memory files are read too, after
   * the project's, each confined to its own directory (Claude Code reads them under
   * CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD=1).
   */
  additionalDirectories?: readonly string[];
}): Promise<MemoryFilesRead> {
  type Candidate = { path: string; scope: MemoryFile["scope"]; roots: readonly string[] };
  const candidates: Candidate[] = [];
  if (options.ownFiles !== false) {
    if (options.home !== undefined) {
      const roots = [options.home];
      candidates.push({ path: join(options.home, ".claude", "CLAUDE.md"), scope: "user", roots });
      for (const name of MEMORY_FILE_NAMES)
        candidates.push({ path: join(options.home, ".forkloop", name), scope: "user", roots });
    }
    const roots = [options.repoRoot ?? resolve(options.cwd)];
    for (const dir of directoryChain(options.cwd, options.repoRoot)) {
      for (const name of MEMORY_FILE_NAMES)
        candidates.push({ path: join(dir, name), scope: "project", roots });
    }
  }
  for (const dir of options.additionalDirectories ?? []) {
    const roots = [resolve(options.cwd, dir)];
    for (const name of MEMORY_FILE_NAMES)
      candidates.push({ path: join(resolve(options.cwd, dir), name), scope: "project", roots });
  }
  const files: MemoryFile[] = [];
  const refused: string[] = [];
  // Real paths already in: a file imported twice, or a memory file another imports, is read once.
  const seen = new Set<string>();
  const visit = (
    path: string,
    { scope, roots }: Omit<Candidate, "path">,
    depth: number,
    importedBy?: string,
  ): void => {
    const read = readProjectFile(path, {
      roots,
      maxBytes: INSTRUCTION_FILE_MAX_BYTES,
      what: importedBy === undefined ? "memory file" : `memory import (from ${importedBy})`,
    });
    if (read.status === "refused") refused.push(read.message);
    if (read.status !== "read" || seen.has(read.realPath)) return;
    seen.add(read.realPath);
    if (read.text.trim().length > 0) {
      files.push({ path, content: read.text, scope, ...(importedBy === undefined ? {} : { importedBy }) });
    }
    if (depth >= MAX_IMPORT_DEPTH) return;
    for (const imported of memoryImports(read.text, path, options.home))
      visit(imported, { scope, roots }, depth + 1, path);
  };
  for (const candidate of candidates) visit(candidate.path, candidate, 0);
  return { files, refused: [...new Set(refused)] };
}

/**
 * The InstructionsLoaded inputs of the memory files read, in load order (R-X1): a memory file is
 * loaded at `session_start`, an import as an `include` of the file that names it; Claude Code's
 * memory types — the user's own files `User`, the rest `Project`.
 */
export function instructionsOf(files: readonly MemoryFile[]): Omit<InstructionsLoadedInput, "context">[] {
  return files.map((file) => ({
    filePath: file.path,
    memoryType: file.scope === "user" ? "User" : "Project",
    ...(file.importedBy === undefined
      ? { loadReason: "session_start" as const }
      : { loadReason: "include" as const, parentFilePath: file.importedBy }),
  }));
}
