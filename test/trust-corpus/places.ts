import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/**
 * Where the corpus keeps its directories, and the small file-system helpers every class uses.
 *
 * Everything lives under /var/tmp, not /tmp: bubblewrap gives a sandboxed command an empty tmpfs
 * at /tmp, so an "outside" directory under /tmp would be invisible there and "could not write
 * outside" would pass even with / bound writable ("a test that cannot fail", R-S9).
 */

/** What must never reach the model, a marker file or a process forkloop starts on its own. */
export const SECRETS = {
  apiKey: "sk-ant-trust-corpus-key-5c1e0b",
  authToken: "trust-corpus-auth-token-77d2",
  oauthToken: "trust-corpus-oauth-token-4a9e",
  forkloopKey: "trust-corpus-forkloop-key-0b3c",
  outside: "OUTSIDE_FILE_SECRET_TRUST_9d04",
} as const;

/** The model credentials as the environment holds them (tool-environment.ts strips these names). */
export const CREDENTIAL_ENV: Readonly<Record<string, string>> = {
  ANTHROPIC_API_KEY: SECRETS.apiKey,
  ANTHROPIC_AUTH_TOKEN: SECRETS.authToken,
  CLAUDE_CODE_OAUTH_TOKEN: SECRETS.oauthToken,
  FORKLOOP_API_KEY: SECRETS.forkloopKey,
};

/** A fresh directory for the whole corpus run, outside /tmp (see above), by its real path. */
export function corpusBase(): string {
  const parent = existsSync("/var/tmp") ? "/var/tmp" : homedir();
  return realpathSync(mkdtempSync(join(parent, "forkloop-trust-corpus-")));
}

/** A new empty directory below `base` (parents made). */
export function freshDir(...parts: string[]): string {
  const dir = join(...parts);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** git for the test's own setup: no user or system config, and no hook of the repository runs. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", ...args], {
    cwd,
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** `git init` + one commit of `a.txt`, in `dir` (made). */
export function initRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "a.txt"), "a\n");
  git(dir, "add", "a.txt");
  git(dir, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "init");
  return dir;
}

/**
 * A copy of `template` at `dir`. The copy's files have new inodes and ctimes, so the index's stat
 * data no longer matches them: the next `git status` re-reads the files (running clean filters)
 * and refreshes the index (running post-index-change) — as after any checkout, touch or build.
 */
export function copyTree(template: string, dir: string): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  cpSync(template, dir, { recursive: true, verbatimSymlinks: true });
  return dir;
}

/** Appends config text to a repository's `.git/config` (as `git config` would write it). */
export function appendGitConfig(repo: string, text: string, file = join(repo, ".git", "config")): void {
  writeFileSync(file, `${readFileSync(file, "utf8")}${text.trim()}\n`);
}

/** An executable shell script at `path` (parents made). */
export function writeScript(path: string, body: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

/** Shell-quotes one word. */
export function shq(word: string): string {
  return `'${word.replace(/'/g, "'\\''")}'`;
}

/**
 * A payload that leaves `marker` behind when it runs, holding its environment (so a marker also
 * shows whether the process had the model credentials).
 */
export function touchPayload(marker: string): string {
  return `env > ${shq(marker)}`;
}

/** sha256 of every regular file below `dir` (relative path → hash). */
export function hashTree(dir: string): Record<string, string> {
  const hashes: Record<string, string> = {};
  if (!existsSync(dir)) return hashes;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    hashes[path.slice(dir.length + 1)] = createHash("sha256").update(readFileSync(path)).digest("hex");
  }
  return hashes;
}

/** The names of the entries of `before` and `after` that differ (added, removed or changed). */
export function changedEntries(before: Record<string, string>, after: Record<string, string>): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names].filter((name) => before[name] !== after[name]).sort();
}

/** Which of `secrets` (name → value) occur in `text`. */
export function leakedSecrets(text: string, secrets: Readonly<Record<string, string>>): string[] {
  return Object.entries(secrets)
    .filter(([, value]) => text.includes(value))
    .map(([name]) => name);
}
