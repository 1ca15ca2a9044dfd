import { readdirSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { ExecutionPoint } from "../sandbox/execution-points.js";
import { gitConfigEntries, gitConfigIncludes, lastGitConfigValue } from "./git-config-values.js";
import { findGitRepository, readSmall } from "./git-repository.js";

/** Where the repositories of some directories keep what git runs (R-S9, R-S10). */
export interface GitLocations {
  /** Work trees' `.git` directories: kept writable (objects, refs, index) but held in place. */
  readonly dotGitDirs: readonly string[];
  /** Git directories (a work tree's own and the common one): nothing in them is an edit a mode approves. */
  readonly gitDirs: readonly string[];
  /** Config, hooks, attributes, a gitfile, `core.hooksPath`, included config files, submodules' own. */
  readonly points: readonly ExecutionPoint[];
}

/** Submodules nest; past this many git directories under `modules/` the rest are not listed. */
const MAX_MODULES = 200;
/** `include.path` chains. */
const MAX_INCLUDE_DEPTH = 5;

/**
 * The execution points of the repositories `dirs` are in, found by reading files (no git runs):
 * the common dir's `config`, `hooks/` and `info/` (attributes pick filter drivers), every git
 * directory's `commondir` (made where there was none, it moves config and hooks), a linked work
 * tree's `config.worktree`, a gitfile (`.git` naming the git directory), the
 * directory `core.hooksPath` names (repository, worktree, global and system config, last one
 * wins; relative to the work tree, `~/` from home), the files `include.path` and
 * `includeIf.*.path` bring in (relative to the including file), and the same for every submodule's
 * git directory under `modules/`.
 */
export function gitExecutionPoints(context: {
  readonly dirs: readonly string[];
  readonly home: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
}): GitLocations {
  const dotGitDirs = new Set<string>();
  const gitDirs = new Set<string>();
  const points: ExecutionPoint[] = [];
  const env = context.env ?? process.env;
  // Each config file is read once per call, however many repositories and keys ask for it.
  const texts = new Map<string, string | undefined>();
  const read = (path: string): string | undefined => {
    if (!texts.has(path)) texts.set(path, readSmall(path));
    return texts.get(path);
  };
  const globalConfigs = [
    "/etc/gitconfig",
    join(env.XDG_CONFIG_HOME || join(context.home, ".config"), "git", "config"),
    join(context.home, ".gitconfig"),
  ];
  for (const dir of context.dirs) {
    const repo = findGitRepository(dir);
    if (repo === undefined || gitDirs.has(repo.gitDir)) continue;
    gitDirs.add(repo.gitDir).add(repo.commonDir);
    const dotGit = join(repo.workTree, ".git");
    if (kindOf(dotGit) === "directory") dotGitDirs.add(dotGit);
    else points.push({ path: dotGit, kind: "file", what: "the gitfile naming the repository" });
    const local = [join(repo.commonDir, "config"), join(repo.gitDir, "config.worktree")];
    if (repo.gitDir !== repo.commonDir) points.push(commonDirPointer(repo.gitDir));
    points.push(...gitDirPoints(repo.commonDir), {
      path: local[1] as string,
      kind: "file",
      what: "git config",
    });
    const includes = includedFiles(local, context.home, read);
    points.push(...includes.map((path) => ({ path, kind: "file" as const, what: "git config (included)" })));
    const hooksPath = lastHooksPath([...globalConfigs, ...local, ...includes], read);
    if (hooksPath !== undefined) {
      const path = hooksPath.startsWith("~/")
        ? join(context.home, hooksPath.slice(2))
        : resolve(repo.workTree, hooksPath);
      points.push({ path, kind: "directory", what: "git hooks (core.hooksPath)" });
    }
    for (const module of submoduleGitDirs(repo.commonDir)) {
      gitDirs.add(module);
      points.push(...gitDirPoints(module));
      const moduleConfig = join(module, "config");
      const moduleHooks = lastHooksPath([moduleConfig], read);
      if (moduleHooks !== undefined && isAbsolute(moduleHooks))
        points.push({
          path: moduleHooks,
          kind: "directory",
          what: "a submodule's git hooks (core.hooksPath)",
        });
    }
  }
  return { dotGitDirs: [...dotGitDirs], gitDirs: [...gitDirs], points };
}

/**
 * `commondir` in any git directory moves where git reads config and hooks from — in a main
 * repository too, where a command could create it to point at a directory it wrote.
 */
function commonDirPointer(gitDir: string): ExecutionPoint {
  return { path: join(gitDir, "commondir"), kind: "file", what: "git's pointer to the common directory" };
}

function gitDirPoints(gitDir: string): ExecutionPoint[] {
  return [
    commonDirPointer(gitDir),
    { path: join(gitDir, "config"), kind: "file", what: "git config" },
    { path: join(gitDir, "hooks"), kind: "directory", what: "git hooks" },
    { path: join(gitDir, "info"), kind: "directory", what: "git attributes and excludes" },
  ];
}

/** `core.hooksPath` as the last of these files sets it. */
function lastHooksPath(
  files: readonly string[],
  read: (path: string) => string | undefined,
): string | undefined {
  let value: string | undefined;
  for (const file of files) {
    const text = read(file);
    if (text === undefined) continue;
    value = lastGitConfigValue(gitConfigEntries(text), "core.hooksPath") ?? value;
  }
  return value === "" ? undefined : value;
}

/** The files the repository's config includes, followed a few levels. */
function includedFiles(
  configs: readonly string[],
  home: string,
  read: (path: string) => string | undefined,
): string[] {
  const found: string[] = [];
  let level = [...configs];
  for (let depth = 0; depth < MAX_INCLUDE_DEPTH && level.length > 0; depth++) {
    const next: string[] = [];
    for (const config of level) {
      const text = read(config);
      if (text === undefined) continue;
      for (const include of gitConfigIncludes(gitConfigEntries(text))) {
        const path = include.startsWith("~/")
          ? join(home, include.slice(2))
          : resolve(dirname(config), include);
        if (found.includes(path)) continue;
        found.push(path);
        next.push(path);
      }
    }
    level = next;
  }
  return found;
}

/** Git directories of submodules: `modules/<name>/…` holding HEAD and config, nested too. */
function submoduleGitDirs(commonDir: string): string[] {
  const found: string[] = [];
  const pending = [join(commonDir, "modules")];
  while (pending.length > 0 && found.length < MAX_MODULES) {
    const dir = pending.pop() as string;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const child = join(dir, name);
      if (kindOf(child) !== "directory") continue;
      if (kindOf(join(child, "HEAD")) === "file" && kindOf(join(child, "config")) === "file") {
        found.push(child);
        pending.push(join(child, "modules"));
      } else {
        // A submodule named a/b keeps its git directory at modules/a/b.
        pending.push(child);
      }
    }
  }
  return found;
}

function kindOf(path: string): "file" | "directory" | undefined {
  try {
    const stats = statSync(path);
    return stats.isDirectory() ? "directory" : stats.isFile() ? "file" : undefined;
  } catch {
    return undefined;
  }
}
