import { statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { gitExecutionPoints } from "../git/git-execution-points.js";
import { settingsExecutionPoints } from "../sandbox/execution-points.js";
import { isInside, placedCopiesDirs, realpathAllowingMissing } from "../workspace-paths.js";

/**
 * Directories whose files make programs run: `.git/` (hooks, `config` with `core.fsmonitor`,
 * `diff.external`, aliases), `.forkloop/` and `.claude/` (settings with hooks and allow rules, for
 * a trusted project). A write there is never approved by acceptEdits or a bare `Write`/`Edit` rule:
 * planted there, `git commit` under `Bash(git commit:*)` would run the model's hook (R-S2, R-S5).
 */
const PROTECTED_DIRECTORIES = new Set([".git", ".forkloop", ".claude"]);

/**
 * Item copies a batch placed in memory: another item's copy is applied to the project when that
 * item settles, so a write into it is a write into the project's future, protected as the state
 * directory the copies otherwise live in is (R-S10, R-B2). An item's own copy is its workspace
 * root, below this directory, and stays writable (`withinRootBelow`).
 */
const PLACED_COPIES = "forkloop's batch item copies";

export interface ProtectionContext {
  /** The project directory. */
  readonly cwd: string;
  /** The workspace roots (default `[cwd]`). */
  readonly workspaceRoots?: readonly string[];
  readonly home?: string;
}

/**
 * What a write to `path` would change that runs later, or undefined (R-S10) — one judgement for
 * Write, Edit and NotebookEdit, for Bash redirections, in the main agent and in every sub-agent.
 * Judged by the path as written AND by its real path (symlinks resolved, a dangling one followed
 * to where it would write): a directory named `.git`, `.forkloop` or `.claude` on either, the git
 * directories of the repositories the project and roots are in (a gitfile's target, a linked
 * worktree's common dir, submodules' under `modules/`), the `core.hooksPath` directory, included
 * git config, a gitfile itself, the project's `.mcp.json`, and the user's settings. The answer
 * names what it is, for the message (`.git`, `the core.hooksPath directory …`).
 */
export function protectedWriteTarget(path: string, context: ProtectionContext): string | undefined {
  const home = context.home ?? homedir();
  const written =
    path === "~" || path.startsWith("~/")
      ? join(home, path.slice(1))
      : isAbsolute(path)
        ? path
        : resolve(context.cwd, path);
  const resolved = realpathAllowingMissing(written);
  const real = resolved.ok ? resolved.path : written;
  const bases = [context.cwd, ...(context.workspaceRoots ?? [])];
  const named = protectedSegment(written, bases) ?? protectedSegment(real, bases.map(realOf));
  if (named !== undefined) return named;
  const dirs = [...new Set(bases.map(realOf))];
  const repository = enclosingGitDirectory(real, dirs);
  if (repository !== undefined) return `the git directory ${repository}`;
  const git = gitExecutionPoints({ dirs, home });
  for (const gitDir of git.gitDirs) {
    if (isInside(real, realOf(gitDir))) return `the git directory ${gitDir}`;
  }
  const points = [
    ...git.points,
    ...settingsExecutionPoints({ cwd: context.cwd, roots: dirs, home }),
    ...placedCopiesDirs().map((path) => ({ path, kind: "directory" as const, what: PLACED_COPIES })),
  ];
  for (const point of points) {
    const target = realOf(point.path);
    if (
      real === target ||
      (point.kind === "directory" && isInside(real, target) && !withinRootBelow(real, target, dirs))
    )
      return `${point.path} (${point.what})`;
  }
  return undefined;
}

/**
 * Whether `path` lies in a workspace root that is itself below the protected directory `point`:
 * a batch item's own copy of the project lives in forkloop's state directory, and its files are
 * the project's, not forkloop's settings. What lies outside that root (the batch's journal, other
 * items' copies, the settings files) stays protected, and the root's own `.git`, `.forkloop` and
 * `.claude` are judged above like any project's.
 */
function withinRootBelow(path: string, point: string, roots: readonly string[]): boolean {
  return roots.some((root) => root !== point && isInside(root, point) && isInside(path, root));
}

/** Why acceptEdits and bare rules do not approve this write, for the message. */
export function protectedWriteReason(path: string, what: string): string {
  const rule = what.startsWith(".") ? `Edit(${what}/**)` : `Edit(//${path.replace(/^\/+/, "")})`;
  return `${path} is inside ${what.startsWith(".") ? `${what}/` : what}, whose files can make git or forkloop run programs; only a rule naming the path (e.g. ${rule}) or bypassPermissions approves such a write`;
}

/** The protected directory name on `path` below one of `bases`, if any. */
function protectedSegment(path: string, bases: readonly string[]): string | undefined {
  for (const base of bases) {
    if (!isInside(path, base)) continue;
    const found = relative(base, path)
      .split(sep)
      .find((segment) => PROTECTED_DIRECTORIES.has(segment));
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * A directory on the way from `path` up to the base it lies in that is a git directory by its
 * contents (HEAD, objects/, refs/ — git's own test): a bare repository, a separate git dir a
 * nested gitfile names, whatever it is called.
 */
function enclosingGitDirectory(path: string, bases: readonly string[]): string | undefined {
  const base = bases.find((candidate) => isInside(path, candidate));
  if (base === undefined) return undefined;
  for (let dir = dirname(path); isInside(dir, base) && dir !== base; dir = dirname(dir)) {
    if (
      kindOf(join(dir, "HEAD")) === "file" &&
      kindOf(join(dir, "objects")) === "directory" &&
      kindOf(join(dir, "refs")) === "directory"
    )
      return dir;
  }
  return undefined;
}

function kindOf(path: string): "file" | "directory" | undefined {
  try {
    const stats = statSync(path);
    return stats.isFile() ? "file" : stats.isDirectory() ? "directory" : undefined;
  } catch {
    return undefined;
  }
}

function realOf(path: string): string {
  const resolved = realpathAllowingMissing(path);
  return resolved.ok ? resolved.path : path;
}
