import { execFile } from "node:child_process";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { toolEnvironment } from "../tool-environment.js";

/** What one `git` run returned; a non-zero exit is data (status, stderr), not an exception. */
export interface GitRun {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/**
 * What the repository's config may not start from forkloop's own isolation git (R-S7): hooks
 * (`post-checkout` on `worktree add`, `post-index-change` on `add -A`, `reference-transaction` on
 * `update-ref`), the fsmonitor (every index refresh), a pager or editor. Command-line scope, above
 * the repository's config and `core.hooksPath`.
 */
const NO_PROGRAMS: readonly string[] = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.pager=cat",
  "-c",
  "core.editor=:",
];

/**
 * Runs `git` with `args` in `cwd`, never through a shell (paths come from the project: hostile
 * input): no hook, fsmonitor, pager or editor the repository names, no prompts for credentials, and
 * an environment without the model credentials (what git does start — a filter driver a
 * repository's own config and `.gitattributes` select — never sees them).
 */
export async function git(
  cwd: string,
  args: readonly string[],
  input?: Buffer,
  env: Readonly<Record<string, string>> = {},
  index: IndexUse = "read",
): Promise<GitRun> {
  const pinned = { ...env, ...(await globalConfigPin(env)) };
  return run(cwd, [...(await noFilterDrivers(cwd, pinned)), ...args], input, pinned, index);
}

/**
 * "read": a read-only command leaves the index as it is (`GIT_OPTIONAL_LOCKS=0`), so it never
 * holds a lock the user's own git would meet. "refresh": in one of forkloop's own item copies,
 * whose index no one else uses, `status` writes back the stat data it refreshed. A copy's
 * checkout writes its files in the second its index is written, so by git's racy-clean rule every
 * status re-reads every file's content until the index is written again a second later
 * (bench/batch-isolation: about 50 ms against 10 ms a status on 5,000 files, twice per item).
 */
export type IndexUse = "read" | "refresh";

/**
 * `git` for a command that never runs a filter driver — it reads the object database, the index's
 * entries or the directory tree, never a worktree file's content through `.gitattributes`:
 * `cat-file --batch` (without `--filters`), `diff --cached --raw`, `clean`, `merge-file` outside a
 * repository. It skips `git`'s listing of the drivers, a second process per call (R-S7 holds: none
 * of these starts a driver; hooks, fsmonitor, pager and editor stay off).
 */
export function gitWithoutFilters(cwd: string, args: readonly string[], input?: Buffer): Promise<GitRun> {
  return run(cwd, args, input, {});
}

/**
 * The user's global git config, fixed for both of a call's runs (R-S7): the filter drivers are
 * listed in one run and switched off in the next, and a global config that did not exist at the
 * listing could be written in between — by a sandboxed background command when home is the
 * workspace (only existing execution points are read-only in the sandbox) — naming a driver the
 * listing never saw. With no global config the two runs read none (`/dev/null`); with one, that
 * file; with both (`~/.gitconfig` and the XDG one) or one the caller names, git's own choice.
 */
export async function globalConfigPin(
  env: Readonly<Record<string, string>>,
): Promise<Record<string, string>> {
  const merged = { ...process.env, ...env };
  if (merged.GIT_CONFIG_GLOBAL !== undefined) return {};
  const home = merged.HOME;
  const xdg = merged.XDG_CONFIG_HOME || (home ? join(home, ".config") : undefined);
  const candidates = [home && join(home, ".gitconfig"), xdg && join(xdg, "git", "config")];
  const existing: string[] = [];
  for (const path of candidates) {
    if (path && (await stat(path).catch(() => undefined)) !== undefined) existing.push(path);
  }
  if (existing.length === 0) return { GIT_CONFIG_GLOBAL: "/dev/null" };
  if (existing.length === 1) return { GIT_CONFIG_GLOBAL: existing[0] as string };
  return {};
}

/**
 * Every filter driver the config names (the repository's, included files', the user's), switched
 * off on the command line: `.gitattributes` selects a driver by name, and its `clean`, `smudge` or
 * `process` program would run on `worktree add` and `add -A`. An empty command runs nothing, and
 * `required=false` lets git go on without it: forkloop's copies hold the files as committed.
 */
async function noFilterDrivers(cwd: string, env: Readonly<Record<string, string>>): Promise<string[]> {
  const listed = await run(
    cwd,
    ["config", "-z", "--name-only", "--get-regexp", "^filter\\."],
    undefined,
    env,
  );
  if (listed.code !== 0) return [];
  const drivers = new Set<string>();
  for (const name of listed.stdout.toString("utf8").split("\0")) {
    const driver = /^filter\.(.+)\.[^.]+$/s.exec(name)?.[1];
    if (driver !== undefined) drivers.add(driver);
  }
  return [...drivers].flatMap((driver) =>
    ["clean=", "smudge=", "process=", "required=false"].flatMap((setting) => [
      "-c",
      `filter.${driver}.${setting}`,
    ]),
  );
}

function run(
  cwd: string,
  args: readonly string[],
  input: Buffer | undefined,
  env: Readonly<Record<string, string>>,
  index: IndexUse = "read",
): Promise<GitRun> {
  return new Promise((resolvePromise, reject) => {
    const child = execFile(
      "git",
      ["-c", "core.quotepath=off", "-c", "core.autocrlf=false", ...NO_PROGRAMS, ...args],
      {
        cwd,
        encoding: "buffer",
        maxBuffer: 256 * 1024 * 1024,
        env: toolEnvironment(process.env, env, {
          GIT_TERMINAL_PROMPT: "0",
          GIT_OPTIONAL_LOCKS: index === "refresh" ? "1" : "0",
          LC_ALL: "C",
        }),
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
        if (error !== null && typeof error.code !== "number") {
          reject(new Error(`git ${args[0]}: ${error.message}`));
          return;
        }
        resolvePromise({ code, stdout, stderr: stderr.toString("utf8") });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
    else child.stdin?.end();
  });
}

/** `git` that must succeed: its stdout, or an error naming the command and git's own message. */
export async function gitOk(
  cwd: string,
  args: readonly string[],
  input?: Buffer,
  env?: Readonly<Record<string, string>>,
  index?: IndexUse,
): Promise<Buffer> {
  return succeeded(cwd, args, await git(cwd, args, input, env, index));
}

/** `gitWithoutFilters` that must succeed, as `gitOk`. */
export async function gitWithoutFiltersOk(
  cwd: string,
  args: readonly string[],
  input?: Buffer,
): Promise<Buffer> {
  return succeeded(cwd, args, await gitWithoutFilters(cwd, args, input));
}

function succeeded(cwd: string, args: readonly string[], run: GitRun): Buffer {
  if (run.code !== 0) throw new Error(`git ${args.join(" ")} failed in ${cwd}: ${run.stderr.trim()}`);
  return run.stdout;
}

/** NUL-separated git output as strings (the last, empty, entry dropped). */
export function nulSeparated(output: Buffer): string[] {
  return output
    .toString("utf8")
    .split("\0")
    .filter((entry) => entry.length > 0);
}
