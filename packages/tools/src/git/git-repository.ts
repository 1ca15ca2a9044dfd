import { realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { readProjectFile } from "../project-files/read-project-file.js";

/** A repository found the way git finds it, without running git (R-S7). */
export interface GitRepository {
  /** The work tree: the directory that holds `.git`. */
  readonly workTree: string;
  /** The repository's own directory: `.git`, or where a gitfile points. */
  readonly gitDir: string;
  /** Where objects, refs and the shared config live: a linked worktree's `commondir`, else `gitDir`. */
  readonly commonDir: string;
}

/** Git's internal files are a few lines; anything larger is not one. */
const SMALL_GIT_FILE = 64 * 1024;

/**
 * The repository `start` is in, found as git's discovery finds it — the nearest `.git` directory
 * or gitfile at or above `start`, not across a filesystem boundary — but by reading files, so no
 * git process (and nothing a repository's config names) runs for it. `core.worktree` is not
 * followed: the work tree is the directory that holds `.git`. Undefined outside a repository.
 */
export function findGitRepository(start: string): GitRepository | undefined {
  let dir: string;
  try {
    dir = realpathSync(resolve(start));
  } catch {
    return undefined;
  }
  const device = deviceOf(dir);
  for (;;) {
    const found = repositoryAt(dir);
    if (found !== undefined) return found === "invalid" ? undefined : found;
    const parent = dirname(dir);
    if (parent === dir || deviceOf(parent) !== device) return undefined;
    dir = parent;
  }
}

function repositoryAt(dir: string): GitRepository | "invalid" | undefined {
  const dotGit = join(dir, ".git");
  let kind: "directory" | "file" | undefined;
  try {
    const stats = statSync(dotGit);
    kind = stats.isDirectory() ? "directory" : stats.isFile() ? "file" : undefined;
  } catch {
    return undefined;
  }
  if (kind === "directory") {
    // An empty or broken `.git` directory is passed over, as git passes over it.
    const repo = withCommonDir(dir, dotGit);
    return repo ?? undefined;
  }
  if (kind !== "file") return undefined;
  // A gitfile that names no repository stops git ("invalid gitfile format"); it stops us too.
  const read = readProjectFile(dotGit, { maxBytes: SMALL_GIT_FILE, singleLink: false, what: "gitfile" });
  if (read.status !== "read") return "invalid";
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(read.text);
  if (match === null) return "invalid";
  const target = match[1] as string;
  return withCommonDir(dir, isAbsolute(target) ? target : resolve(dir, target)) ?? "invalid";
}

/** The repository whose git directory is `gitDir`, if it looks like one (git's is_git_directory). */
function withCommonDir(workTree: string, gitDir: string): GitRepository | undefined {
  const common = readSmall(join(gitDir, "commondir"));
  const commonDir =
    common === undefined
      ? gitDir
      : isAbsolute(common.trim())
        ? common.trim()
        : resolve(gitDir, common.trim());
  if (
    !exists(join(gitDir, "HEAD")) ||
    !isDirectory(join(commonDir, "objects")) ||
    !isDirectory(join(commonDir, "refs"))
  )
    return undefined;
  return { workTree, gitDir, commonDir };
}

/** What HEAD says: the branch it points at, or a detached commit. */
export type GitHead =
  | { readonly type: "branch"; readonly ref: string }
  | { readonly type: "detached"; readonly oid: string };

/** HEAD, read as a file (R-S7: the branch needs no git process). Undefined when HEAD is not one git writes. */
export function readGitHead(repo: GitRepository): GitHead | undefined {
  const text = readSmall(join(repo.gitDir, "HEAD"));
  return text === undefined ? undefined : parseGitHead(text);
}

export function parseGitHead(text: string): GitHead | undefined {
  const ref = /^ref: (refs\/[^\s\0]+)\s*$/.exec(text);
  if (ref !== null) return { type: "branch", ref: ref[1] as string };
  const oid = /^([0-9a-f]{40}|[0-9a-f]{64})\s*$/.exec(text);
  return oid === null ? undefined : { type: "detached", oid: oid[1] as string };
}

/** The name `git rev-parse --abbrev-ref HEAD` prints: the branch, or `HEAD` when detached. */
export function headName(head: GitHead): string {
  if (head.type === "detached") return "HEAD";
  return head.ref.startsWith("refs/heads/")
    ? head.ref.slice("refs/heads/".length)
    : head.ref.slice("refs/".length);
}

/** A small git-internal file's text (no confinement: git reads it wherever the repository is). */
export function readSmall(path: string): string | undefined {
  const read = readProjectFile(path, { maxBytes: SMALL_GIT_FILE, singleLink: false, what: "git file" });
  return read.status === "read" ? read.text : undefined;
}

function deviceOf(path: string): number | undefined {
  try {
    return statSync(path).dev;
  } catch {
    return undefined;
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
