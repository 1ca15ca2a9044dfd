import { relative, sep } from "node:path";

/**
 * Directories whose files make programs run: `.git/` (hooks, `config` with `core.fsmonitor`,
 * `diff.external`, aliases), `.forkloop/` and `.claude/` (settings with hooks and allow rules, for
 * a trusted project). A write there is never approved by acceptEdits or a bare `Write`/`Edit` rule:
 * planted there, `git commit` under `Bash(git commit:*)` would run the model's hook (R-S2, R-S5).
 */
const PROTECTED_DIRECTORIES = new Set([".git", ".forkloop", ".claude"]);

/** The protected directory `path` lies in (relative to the project `cwd`), or undefined. */
export function protectedDirectory(path: string, cwd: string): string | undefined {
  return relative(cwd, path)
    .split(sep)
    .find((segment) => PROTECTED_DIRECTORIES.has(segment));
}

/** Why acceptEdits and bare rules do not approve this write, for the message. */
export function protectedWriteReason(path: string, directory: string): string {
  return `${path} is inside ${directory}/, whose files can make git or forkloop run programs; only a rule naming the path (e.g. Edit(${directory}/**)) or bypassPermissions approves such a write`;
}
