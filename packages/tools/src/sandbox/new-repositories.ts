import { lstatSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { findGitRepository } from "../git/git-repository.js";
import { configProblem } from "../shell/git-config-check.js";

/**
 * A repository a sandboxed command makes where there was none (R-S9): `git init` in a workspace
 * that is not a repository is ordinary work, but one that already holds a hook or a config key
 * that runs a program would run it for the user's next git command, outside the sandbox. Before
 * the call, the directories with no repository are noted; after it (the sandbox gone), a `.git`
 * that appeared in one of them with such a hook or key — or as a gitfile naming a git directory
 * elsewhere, which cannot be checked — is moved aside. A plain `git init` is left alone.
 */
export function watchNewRepositories(dirs: readonly string[]): () => string[] {
  const watched = dirs.filter((dir) => findGitRepository(dir) === undefined && !exists(join(dir, ".git")));
  return () => {
    const lines: string[] = [];
    for (const dir of watched) {
      const dotGit = join(dir, ".git");
      if (!exists(dotGit)) continue;
      const problem = runsSomething(dotGit);
      if (problem === undefined) continue;
      const aside = `${dotGit}.forkloop-blocked-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      try {
        renameSync(dotGit, aside);
        lines.push(
          `The command made a git repository at ${dir} whose ${problem}, which the next git command outside the sandbox would run; it was moved to ${aside}.`,
        );
      } catch (error) {
        lines.push(
          `The command made a git repository at ${dir} whose ${problem}, and forkloop could not move it aside (${(error as NodeJS.ErrnoException).code ?? String(error)}): check ${dotGit} before running git there.`,
        );
      }
    }
    return lines;
  };
}

/** What in a new `.git` would run a program, if anything. */
function runsSomething(dotGit: string): string | undefined {
  if (!lstatSync(dotGit).isDirectory())
    return ".git is a file naming a git directory elsewhere (not checked)";
  let hooks: string[] = [];
  try {
    hooks = readdirSync(join(dotGit, "hooks")).filter((name) => !name.endsWith(".sample"));
  } catch {
    // No hooks directory.
  }
  if (hooks.length > 0) return `hooks directory holds ${hooks.join(", ")}`;
  let config = "";
  try {
    config = readFileSync(join(dotGit, "config"), "utf8");
  } catch {
    return undefined;
  }
  const key = configProblem(config);
  return key === undefined ? undefined : `config sets ${key}`;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
