import { execFile } from "node:child_process";

/** What one `git` run returned; a non-zero exit is data (status, stderr), not an exception. */
export interface GitRun {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/**
 * Runs `git` with `args` in `cwd`, never through a shell (paths come from the project: hostile
 * input). The user's and the system's git configuration are left out of what decides the result
 * — no pager, no hooks run by these plumbing commands, no prompts for credentials.
 */
export function git(
  cwd: string,
  args: readonly string[],
  input?: Buffer,
  env: Readonly<Record<string, string>> = {},
): Promise<GitRun> {
  return new Promise((resolvePromise, reject) => {
    const child = execFile(
      "git",
      ["-c", "core.quotepath=off", "-c", "core.autocrlf=false", ...args],
      {
        cwd,
        encoding: "buffer",
        maxBuffer: 256 * 1024 * 1024,
        env: { ...process.env, ...env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" },
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
): Promise<Buffer> {
  const run = await git(cwd, args, input, env);
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
