import { randomInt } from "node:crypto";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { git } from "./git-command.js";
import { WorkspaceError } from "./workspace-error.js";

/** Where a session's worktree was made (or found) and the branch it is on. */
export interface SessionWorktree {
  /** The worktree's directory: `<repository root>/.claude/worktrees/<name>` (a `/` in the name is `+`). */
  readonly dir: string;
  readonly name: string;
  /** `worktree-<name>`. */
  readonly branch: string;
  /** False when a worktree of that name was there already (the session continues in it). */
  readonly created: boolean;
}

/**
 * What the worktree starts from: "fresh" (default) the remote's default branch after a fetch
 * (origin/HEAD), else local HEAD when there is no remote or it cannot be reached; "head" always
 * local HEAD (Claude Code's `worktree.baseRef` setting).
 */
export type WorktreeBase = "fresh" | "head";

const MAX_NAME = 64;
const SEGMENT = /^[A-Za-z0-9._-]+$/;

/**
 * R-X1: `--worktree [name]` as Claude Code 2.1.332 does it — the session runs in a new git
 * worktree `.claude/worktrees/<name>` at the repository's top level, on a new branch
 * `worktree-<name>`; a name already there is the same worktree again. Without a name one is
 * made up (`bright-running-fox`). The worktree is locked with the session's pid as the reason
 * (so `git worktree prune` leaves it alone) and kept when the run ends, changed or not.
 * Outside git, or with a name git cannot take, a WorkspaceError names the fix (exit 2).
 */
export async function openSessionWorktree(options: {
  readonly cwd: string;
  readonly name?: string;
  readonly base?: WorktreeBase;
  /** How the lock's reason names the program ("forkloop session <name> (pid …)"). */
  readonly program?: string;
}): Promise<SessionWorktree> {
  const top = await git(options.cwd, ["rev-parse", "--show-toplevel"]);
  if (top.code !== 0) {
    throw new WorkspaceError(
      `--worktree: ${options.cwd} is not in a git repository; run it inside one (or \`git init\` and commit first), or drop --worktree`,
    );
  }
  const root = top.stdout.toString("utf8").trim();
  const name = options.name === undefined || options.name === "" ? madeUpName() : checkedName(options.name);
  const flat = name.replaceAll("/", "+");
  const dir = join(root, ".claude", "worktrees", flat);
  const branch = `worktree-${flat}`;
  const reason = `${options.program ?? "forkloop"} session ${name} (pid ${process.pid})`;
  if (await isDirectory(dir)) {
    const listed = await git(root, ["worktree", "list", "--porcelain"]);
    if (listed.code === 0 && listed.stdout.toString("utf8").includes(`worktree ${dir}\n`)) {
      await git(root, ["worktree", "unlock", dir]);
      await git(root, ["worktree", "lock", "--reason", reason, dir]);
      return { dir, name, branch, created: false };
    }
    throw new WorkspaceError(
      `--worktree ${name}: ${dir} exists but is not a git worktree of ${root}; remove it or give another name`,
    );
  }
  const head = await git(root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
  if (head.code !== 0) {
    throw new WorkspaceError(
      `--worktree: the repository at ${root} has no commit yet; commit first (git add -A && git commit -m init)`,
    );
  }
  const base = options.base === "head" ? "HEAD" : await remoteDefault(root);
  const add = await git(root, [
    "worktree",
    "add",
    "--quiet",
    "--lock",
    "--reason",
    reason,
    "-b",
    branch,
    dir,
    base,
  ]);
  if (add.code !== 0) {
    throw new WorkspaceError(
      `--worktree ${name}: git could not create the worktree (${add.stderr.trim().split("\n").pop()}); give another name`,
    );
  }
  return { dir, name, branch, created: true };
}

/**
 * The remote's default branch, fetched (`origin/HEAD`, else `origin/main` or `origin/master`),
 * or local HEAD when there is no remote or none of those is known; a failed fetch keeps what
 * was fetched before.
 */
async function remoteDefault(root: string): Promise<string> {
  const remote = await git(root, ["remote", "get-url", "origin"]);
  if (remote.code !== 0) return "HEAD";
  await git(root, ["fetch", "--quiet", "origin"]);
  const symbolic = await git(root, ["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"]);
  const candidates = [
    ...(symbolic.code === 0 ? [symbolic.stdout.toString("utf8").trim()] : []),
    "refs/remotes/origin/main",
    "refs/remotes/origin/master",
  ];
  for (const ref of candidates) {
    if ((await git(root, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`])).code === 0) return ref;
  }
  return "HEAD";
}

/** Claude Code's rule: at most 64 characters; `/`-separated segments of letters, digits, `.`, `_`, `-`. */
function checkedName(name: string): string {
  const fix = "e.g. --worktree fix-login";
  if (name.length > MAX_NAME) {
    throw new WorkspaceError(
      `--worktree: the name must be ${MAX_NAME} characters or fewer (got ${name.length}); give a shorter one, ${fix}`,
    );
  }
  const segments = name.split("/");
  if (segments.some((segment) => segment === "." || segment === "..")) {
    throw new WorkspaceError(`--worktree "${name}": a name must not have "." or ".." segments; ${fix}`);
  }
  if (!segments.every((segment) => SEGMENT.test(segment))) {
    throw new WorkspaceError(
      `--worktree "${name}": each "/"-separated part must be non-empty and only letters, digits, dots, underscores and dashes; ${fix}`,
    );
  }
  return name;
}

const ADJECTIVES = [
  "bright",
  "calm",
  "eager",
  "gentle",
  "happy",
  "lively",
  "quiet",
  "swift",
  "ticklish",
  "witty",
  "brave",
  "clever",
];
const VERBS = ["running", "cooking", "dancing", "humming", "jumping", "reading", "singing", "sleeping"];
const ANIMALS = ["fox", "sloth", "otter", "heron", "badger", "lynx", "panda", "wren", "koala", "moose"];

/** `adjective-verb-animal`, as Claude Code names an unnamed worktree (`ticklish-cooking-sloth`). */
function madeUpName(): string {
  const pick = (words: readonly string[]) => words[randomInt(words.length)] as string;
  return `${pick(ADJECTIVES)}-${pick(VERBS)}-${pick(ANIMALS)}`;
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() === true;
}
