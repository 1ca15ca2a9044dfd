import { execFile } from "node:child_process";

export interface GitStatus {
  readonly branch: string;
  /** `git status --short` lines, cut to `maxChangedFiles`. */
  readonly changes: readonly string[];
  readonly changesTruncated: number;
  readonly recentCommits: readonly string[];
}

function git(cwd: string, args: readonly string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile("git", [...args], { cwd, timeout: 5_000, maxBuffer: 4 * 1024 * 1024 }, (error, stdout) => {
      resolve(error ? null : stdout);
    });
  });
}

/** Git state for the system prompt (§1.2 prefetch); null outside a repository or without git. */
export async function readGitStatus(
  cwd: string,
  options: { maxChangedFiles?: number } = {},
): Promise<GitStatus | null> {
  const maxChanged = options.maxChangedFiles ?? 40;
  const [branch, status, log] = await Promise.all([
    git(cwd, ["rev-parse", "--abbrev-ref", "HEAD"]),
    git(cwd, ["status", "--short"]),
    git(cwd, ["log", "--oneline", "-n", "5"]),
  ]);
  if (branch === null) return null;
  const changes = (status ?? "").split("\n").filter((line) => line.trim().length > 0);
  return {
    branch: branch.trim(),
    changes: changes.slice(0, maxChanged),
    changesTruncated: Math.max(0, changes.length - maxChanged),
    recentCommits: (log ?? "").split("\n").filter((line) => line.trim().length > 0),
  };
}

/** Root of the git work tree containing `cwd`, or null. */
export async function gitRoot(cwd: string): Promise<string | null> {
  const out = await git(cwd, ["rev-parse", "--show-toplevel"]);
  return out === null ? null : out.trim();
}

export interface GitSnapshot {
  readonly repoRoot: string | null;
  readonly status: GitStatus | null;
}

/** Reads in flight, by directory: sessions that start together in one directory share one. */
const inFlight = new Map<string, Promise<GitSnapshot>>();

/**
 * The repository root and git status of `cwd` at session start (§1.2 prefetch, R-K1: many
 * sessions in one process). Sessions whose prefetch overlaps in time share one read — four git
 * processes for thirty-two sessions started together instead of 128, which is most of an
 * in-process session's time to first request — and each still gets a snapshot taken after it
 * started. Outside a repository only the root is asked for.
 */
export function readGitSnapshot(cwd: string): Promise<GitSnapshot> {
  const running = inFlight.get(cwd);
  if (running !== undefined) return running;
  const read = (async (): Promise<GitSnapshot> => {
    const repoRoot = await gitRoot(cwd);
    return { repoRoot, status: repoRoot === null ? null : await readGitStatus(cwd) };
  })().finally(() => inFlight.delete(cwd));
  inFlight.set(cwd, read);
  return read;
}

export function formatGitStatus(status: GitStatus): string {
  const lines = [`Current branch: ${status.branch}`, "", "Status:"];
  lines.push(...(status.changes.length === 0 ? ["(clean)"] : status.changes));
  if (status.changesTruncated > 0) lines.push(`… and ${status.changesTruncated} more changed files`);
  lines.push("", "Recent commits:", ...status.recentCommits);
  return lines.join("\n");
}
