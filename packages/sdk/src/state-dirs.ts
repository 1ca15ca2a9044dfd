import { createHash } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { forkloopUserDir } from "@forkloop/tools";
import { OptionsError } from "./options-error.js";

/**
 * Where forkloop keeps one project's sessions and batches: outside the
 * checkout, so a read-only checkout works, transcripts (file contents) never show up in
 * `git status`, and state belongs to the project rather than to the subdirectory a command ran in.
 */
export interface ProjectState {
  /** The project: the nearest directory at or above cwd holding `.git`, else cwd itself. */
  readonly projectRoot: string;
  /** Where new sessions and batches go. */
  readonly dir: string;
  /** Searched after `dir` for existing state, never written anew: `<cwd>/.forkloop`, where it used to live. */
  readonly legacyDirs: readonly string[];
  /** The user's forkloop directory (`FORKLOOP_HOME`, else `~/.forkloop`): its record of state made in a checkout (owned-state.ts). */
  readonly userDir: string;
}

export interface ProjectStateOptions {
  readonly cwd: string;
  /** `FORKLOOP_HOME` and `HOME` are read from it. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `--state-dir DIR` / the `stateDir` option: exactly this directory; nothing else is searched. */
  readonly stateDir?: string;
}

/**
 * `stateDir`, else `$FORKLOOP_HOME/projects/<project key>`, FORKLOOP_HOME defaulting to
 * `~/.forkloop` — Claude Code keeps its transcripts the same way, in `~/.claude/projects/<path>`.
 * Resolves paths only; nothing is created (`ensureWritableDir` checks before a run writes).
 */
export function projectState(options: ProjectStateOptions): ProjectState {
  const cwd = resolve(options.cwd);
  const real = existsSync(cwd) ? realpathSync(cwd) : cwd;
  const projectRoot = gitRoot(real);
  const userDir = forkloopUserDir(options.env);
  if (options.stateDir !== undefined) {
    return { projectRoot, dir: resolve(cwd, options.stateDir), legacyDirs: [], userDir };
  }
  return {
    projectRoot,
    dir: join(userDir, "projects", projectKey(projectRoot)),
    legacyDirs: [join(cwd, ".forkloop")],
    userDir,
  };
}

/** The nearest ancestor of `dir` (itself included) with a `.git` entry (a directory, or a worktree's file). */
function gitRoot(dir: string): string {
  for (let current = dir; ; current = dirname(current)) {
    if (existsSync(join(current, ".git"))) return current;
    if (dirname(current) === current) return dir;
  }
}

/**
 * A readable, collision-free directory name for a project: its path as Claude Code writes it
 * (`/home/me/app` → `-home-me-app`, the last 120 characters) plus a hash of the exact path, since
 * `/a/b-c` and `/a/b/c` read the same.
 */
export function projectKey(projectRoot: string): string {
  const readable = projectRoot.replace(/[^A-Za-z0-9]/g, "-").slice(-120);
  return `${readable}-${createHash("sha256").update(projectRoot).digest("hex").slice(0, 8)}`;
}

/** Where new sessions go. */
export function sessionsDir(state: ProjectState): string {
  return join(state.dir, "sessions");
}

/** Where new batches go. */
export function batchesDir(state: ProjectState): string {
  return join(state.dir, "batches");
}

/** Every directory that may hold the project's sessions, where new ones go first. */
export function sessionsDirs(state: ProjectState): string[] {
  return [state.dir, ...state.legacyDirs].map((dir) => join(dir, "sessions"));
}

/** Every directory that may hold the project's batches, where new ones go first. */
export function batchesDirs(state: ProjectState): string[] {
  return [state.dir, ...state.legacyDirs].map((dir) => join(dir, "batches"));
}

/**
 * Creates `dir` if needed and proves it takes a file, before anything is spent (an
 * unwritable state or output directory used to be found after every item ran). The failure names
 * the directory, why, and the fix.
 */
export async function ensureWritableDir(dir: string, what: string, fix: string): Promise<void> {
  const probe = join(dir, `.forkloop-write-test-${process.pid}`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(probe, "", { mode: 0o600 });
    await rm(probe, { force: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    const why =
      code === "EACCES" || code === "EPERM"
        ? "permission denied"
        : code === "EROFS"
          ? "read-only file system"
          : code === "ENOTDIR" || code === "EEXIST"
            ? "a path component is a file"
            : code === "ENOSPC" || code === "EDQUOT"
              ? "no space left on the device"
              : code;
    throw new OptionsError(`cannot write ${what} to ${dir} (${why}); ${fix}.`);
  }
}

/** `--cwd` must name an existing directory: a typo must not become a new, empty project. */
export async function checkProjectDir(cwd: string, flag = "--cwd"): Promise<string> {
  const info = await stat(cwd).catch(() => undefined);
  if (info === undefined) throw new OptionsError(`${flag} ${cwd}: no such directory; give an existing one.`);
  if (!info.isDirectory())
    throw new OptionsError(`${flag} ${cwd}: not a directory; give the project's directory.`);
  return cwd;
}

/** Ids become path segments: refuse anything that could escape the state directory. */
export function checkId(kind: "session" | "batch", id: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id) || id.includes("..")) {
    throw new OptionsError(
      `"${id}" is not a valid ${kind} id (letters, digits, ".", "_" and "-" only). ${
        kind === "session"
          ? "List them with `forkloop sessions list`."
          : "List them with `forkloop batch list`."
      }`,
    );
  }
  return id;
}
