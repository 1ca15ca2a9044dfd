import { resolve } from "node:path";
import {
  findGitRepository,
  type GitRepository,
  headName,
  readGitHead,
  withHardenedGit,
} from "@forkloop/tools";

export interface GitStatus {
  readonly branch: string;
  /** `git status --short` lines, cut to `maxChangedFiles`. */
  readonly changes: readonly string[];
  readonly changesTruncated: number;
  readonly recentCommits: readonly string[];
}

/**
 * Git state for the system prompt (§1.2 prefetch); null without git, or when git cannot read it.
 * R-S7: the repository and its branch are found by reading files; only `status` and `log` run
 * git, and that git reads none of the repository's configuration (`withHardenedGit`), so nothing
 * the repository names runs.
 */
async function readRepositoryStatus(
  repo: GitRepository,
  cwd: string,
  maxChanged: number,
  env: NodeJS.ProcessEnv | undefined,
): Promise<GitStatus | null> {
  const head = readGitHead(repo);
  if (head === undefined) return null;
  const outputs = await withHardenedGit(
    repo,
    (git) =>
      Promise.all([
        // Submodules are not entered: each has a configuration of its own.
        git(["status", "--short", "--ignore-submodules=all"], cwd),
        git(["log", "--oneline", "--no-show-signature", "-n", "5"], cwd),
      ]),
    env === undefined ? {} : { env },
  );
  if (outputs === undefined) return null;
  const [status, log] = outputs;
  if (status === null) return null;
  const changes = status.split("\n").filter((line) => line.trim().length > 0);
  return {
    branch: headName(head),
    changes: changes.slice(0, maxChanged),
    changesTruncated: Math.max(0, changes.length - maxChanged),
    // A branch without commits yet has no log.
    recentCommits: (log ?? "").split("\n").filter((line) => line.trim().length > 0),
  };
}

export interface GitSnapshot {
  readonly repoRoot: string | null;
  readonly status: GitStatus | null;
  /** A linked worktree (`git worktree add`, `forkloop run --worktree`): its git directory is not the repository's. */
  readonly linkedWorktree: boolean;
}

/** Reads in flight, by directory: sessions that start together in one directory share one. */
const inFlight = new Map<string, Promise<GitSnapshot>>();

/**
 * The repository root and git status of `cwd` at session start (§1.2 prefetch, R-K1: many
 * sessions in one process). Sessions whose prefetch overlaps in time share one read — three git
 * processes for thirty-two sessions started together instead of 96, which is most of an
 * in-process session's time to first request — and each still gets a snapshot taken after it
 * started. Outside a repository no git runs. `env`: the run's environment (default the
 * process's), whose PATH finds git, as Claude Code's own git runs in the environment it is given.
 */
export function readGitSnapshot(cwd: string, env?: NodeJS.ProcessEnv): Promise<GitSnapshot> {
  // Shared only by sessions whose git is the same program (found on the same PATH).
  const key = `${cwd}\0${(env ?? process.env).PATH ?? ""}`;
  const running = inFlight.get(key);
  if (running !== undefined) return running;
  const read = (async (): Promise<GitSnapshot> => {
    const repo = findGitRepository(cwd);
    if (repo === undefined) return { repoRoot: null, status: null, linkedWorktree: false };
    return {
      repoRoot: repo.workTree,
      status: await readRepositoryStatus(repo, resolve(cwd), 40, env),
      linkedWorktree: repo.gitDir !== repo.commonDir,
    };
  })().finally(() => inFlight.delete(key));
  inFlight.set(key, read);
  return read;
}

export function formatGitStatus(status: GitStatus): string {
  const lines = [`Current branch: ${status.branch}`, "", "Status:"];
  lines.push(...(status.changes.length === 0 ? ["(clean)"] : status.changes));
  if (status.changesTruncated > 0) lines.push(`… and ${status.changesTruncated} more changed files`);
  lines.push("", "Recent commits:", ...status.recentCommits);
  return lines.join("\n");
}
