import { execFile } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { toolEnvironment } from "../tool-environment.js";
import { isInside } from "../workspace-paths.js";
import { type GitRepository, parseGitHead, readSmall } from "./git-repository.js";

/**
 * forkloop's own git calls (the session prefetch) never read the repository's configuration
 * (R-S7). The repository's config, hooks and `info/attributes` are where it names programs —
 * `core.fsmonitor`, hooks (`post-index-change` on an index refresh, via `core.hooksPath` too),
 * `filter.<driver>.clean|process` selected by `.gitattributes`, `diff.<driver>.textconv`,
 * `log.showSignature` + `gpg.program`, `include.path` that brings any of them in — and a
 * sandboxed command can plant them for the next session to run outside the sandbox. An
 * allowlist beats a blocklist here, since git keeps adding such keys: git runs against a
 * directory of forkloop's own (`GIT_DIR`) that holds HEAD, a config forkloop wrote, and links to
 * the repository's data (objects, refs, index); the work tree is the real one. So a filter named
 * by `.gitattributes` has no driver, no hook directory exists, and submodules are not entered.
 */

/** Keys of the repository's config that shape what `status` and `log` print and start nothing. */
const COPIED_KEYS =
  /^(core\.(filemode|symlinks|ignorecase|precomposeunicode|autocrlf|eol|checkstat|trustctime|quotepath|abbrev|splitindex|commitgraph|multipackindex|bigfilethreshold)|status\.(showuntrackedfiles|renames|renamelimit)|diff\.(renames|renamelimit)|i18n\.(logoutputencoding|commitencoding))$/;

/**
 * Given on git's command-line scope after the copied keys, so nothing can undo them; each names
 * the execution point it closes. Belt and braces: the config git reads is already forkloop's own.
 */
const CONTROLS: readonly (readonly [key: string, value: string])[] = [
  ["core.fsmonitor", "false"],
  ["core.hooksPath", "/dev/null"],
  ["core.pager", "cat"],
  ["core.editor", ":"],
  ["core.askPass", ""],
  ["credential.helper", ""],
  ["protocol.allow", "never"],
  ["diff.external", ""],
  ["diff.ignoreSubmodules", "all"],
  ["submodule.recurse", "false"],
  ["status.submoduleSummary", "false"],
  ["log.showSignature", "false"],
  ["gc.auto", "0"],
  ["maintenance.auto", "false"],
];

/** Variables that name a program git (or its pager) would start, besides every `GIT_*`. */
const PROGRAM_VARIABLES = new Set(["PAGER", "EDITOR", "VISUAL", "SSH_ASKPASS", "LESSOPEN", "LESSCLOSE"]);

export interface HardenedGitOptions {
  /** Per git process; it is killed after this (default 5 000 ms). */
  readonly timeoutMs?: number;
  /** The environment to start from (default `process.env`); model credentials are removed. */
  readonly env?: NodeJS.ProcessEnv;
}

/** Runs one git command; its stdout, or null when it failed, timed out or git is missing. */
export type HardenedGitRun = (args: readonly string[], cwd: string) => Promise<string | null>;

/**
 * The environment of forkloop's own git: Bash's (no model credentials, R-S4), no `GIT_*` from
 * forkloop's own environment (`GIT_DIR`, `GIT_CONFIG_PARAMETERS`, `GIT_EXEC_PATH`,
 * `GIT_SSH_COMMAND` …), no system or global config, no optional locks, no prompts.
 */
export function hardenedGitEnvironment(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = toolEnvironment(base);
  for (const name of Object.keys(env)) {
    if (name.startsWith("GIT_") || PROGRAM_VARIABLES.has(name)) delete env[name];
  }
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_TERMINAL_PROMPT: "0",
    GIT_NO_REPLACE_OBJECTS: "1",
  };
}

/**
 * Runs `use` with a git that sees `repo`'s data and none of its configuration, then removes
 * forkloop's directory. Undefined when the repository's HEAD is not one git writes.
 */
export async function withHardenedGit<T>(
  repo: GitRepository,
  use: (git: HardenedGitRun) => Promise<T>,
  options: HardenedGitOptions = {},
): Promise<T | undefined> {
  const head = readSmall(join(repo.gitDir, "HEAD"));
  if (head === undefined || parseGitHead(head) === undefined) return undefined;
  const base = hardenedGitEnvironment(options.env);
  const timeoutMs = options.timeoutMs ?? 5_000;
  const shadow = mkdtempSync(join(tmpdir(), "forkloop-git-"));
  try {
    const copied = await copiedConfig(repo, shadow, base, timeoutMs);
    writeFileSync(join(shadow, "HEAD"), head);
    writeFileSync(join(shadow, "config"), shadowConfig(copied.objectFormat));
    if (!linkData(repo, shadow)) return undefined;
    const env = withCommandLineConfig({ ...base, GIT_DIR: shadow, GIT_WORK_TREE: repo.workTree }, [
      ...copied.entries,
      ...CONTROLS,
    ]);
    return await use((args, cwd) =>
      runGit(["--no-pager", "--no-optional-locks", ...args], cwd, env, timeoutMs),
    );
  } finally {
    rmSync(shadow, { recursive: true, force: true });
  }
}

/**
 * HEAD is written, not linked (git reads a linked HEAD as a legacy symlink ref); the rest is data.
 * False when one of them is not what git writes (a FIFO or device as `index` would hang git).
 */
function linkData(repo: GitRepository, shadow: string): boolean {
  const links: [name: string, target: string][] = [
    ["objects", join(repo.commonDir, "objects")],
    ["refs", join(repo.commonDir, "refs")],
    ["packed-refs", join(repo.commonDir, "packed-refs")],
    ["shallow", join(repo.commonDir, "shallow")],
    ["index", join(repo.gitDir, "index")],
  ];
  // A split index keeps its shared part next to the index.
  for (const name of safeReaddir(repo.gitDir)) {
    if (/^sharedindex\.[0-9a-f]+$/.test(name)) links.push([name, join(repo.gitDir, name)]);
  }
  for (const [name, target] of links) {
    const kind = kindOf(target);
    if (kind === "missing") continue;
    if (kind !== (name === "objects" || name === "refs" ? "directory" : "file")) return false;
    if (name === "objects" && kindOf(join(target, "info", "alternates")) !== "missing")
      linkObjects(target, join(shadow, name), repo.workTree);
    else symlinkSync(target, join(shadow, name));
  }
  // What the repository ignores locally, without `info/attributes` (which can name a filter driver).
  const exclude = join(repo.commonDir, "info", "exclude");
  if (kindOf(exclude) === "file") {
    mkdirSync(join(shadow, "info"));
    symlinkSync(exclude, join(shadow, "info", "exclude"));
  }
  return true;
}

/**
 * The object store with `info/alternates` cut to stores inside the work tree (R-S7, R-S8): an
 * alternate elsewhere (planted in `.git/objects`, which a sandboxed command may write, or shipped)
 * would put another repository's commits — subjects, file names — into what git prints for the
 * model. A store that has alternates of its own is left out too (git follows chains). Without
 * the objects of a dropped store git fails, and the prefetch shows nothing.
 */
function linkObjects(objects: string, shadowObjects: string, workTree: string): void {
  mkdirSync(join(shadowObjects, "info"), { recursive: true });
  for (const name of safeReaddir(objects)) {
    if (name !== "info") symlinkSync(join(objects, name), join(shadowObjects, name));
  }
  for (const name of safeReaddir(join(objects, "info"))) {
    if (name !== "alternates" && name !== "http-alternates")
      symlinkSync(join(objects, "info", name), join(shadowObjects, "info", name));
  }
  const root = realOrSelf(workTree);
  const kept = (readSmall(join(objects, "info", "alternates")) ?? "")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#") && !line.startsWith('"'))
    .map((line) => realOrSelf(resolve(objects, line)))
    .filter((store) => isInside(store, root) && kindOf(join(store, "info", "alternates")) === "missing");
  if (kept.length > 0) writeFileSync(join(shadowObjects, "info", "alternates"), `${kept.join("\n")}\n`);
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function shadowConfig(objectFormat: string | undefined): string {
  const lines = [
    "[core]",
    `\trepositoryformatversion = ${objectFormat === undefined ? 0 : 1}`,
    "\tbare = false",
  ];
  if (objectFormat !== undefined) lines.push("[extensions]", `\tobjectFormat = ${objectFormat}`);
  return `${lines.join("\n")}\n`;
}

interface CopiedConfig {
  readonly entries: readonly (readonly [string, string])[];
  readonly objectFormat: string | undefined;
}

/**
 * The allowlisted keys of the repository's config (and `config.worktree`), parsed by git itself
 * from stdin: `--no-includes`, and no repository around it, so parsing starts nothing.
 */
async function copiedConfig(
  repo: GitRepository,
  shadow: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<CopiedConfig> {
  const texts = [join(repo.commonDir, "config"), join(repo.gitDir, "config.worktree")]
    .filter((path, index, all) => all.indexOf(path) === index)
    .map((path) => readSmall(path))
    .filter((text): text is string => text !== undefined);
  if (texts.length === 0) return { entries: [], objectFormat: undefined };
  const listed = await runGit(
    ["config", "--file", "-", "--no-includes", "--list", "-z"],
    shadow,
    { ...env, GIT_DIR: join(shadow, "none") },
    timeoutMs,
    texts.join("\n"),
  );
  const entries: [string, string][] = [];
  let objectFormat: string | undefined;
  for (const record of (listed ?? "").split("\0")) {
    const newline = record.indexOf("\n");
    const key = newline === -1 ? record : record.slice(0, newline);
    const value = newline === -1 ? "true" : record.slice(newline + 1);
    if (key === "extensions.objectformat" && /^sha(1|256)$/.test(value)) objectFormat = value;
    else if (COPIED_KEYS.test(key)) entries.push([key, value]);
  }
  return { entries, objectFormat: objectFormat === "sha1" ? undefined : objectFormat };
}

/** `entries` on git's command-line scope (`GIT_CONFIG_COUNT`), read as if given with `-c`. */
function withCommandLineConfig(
  env: NodeJS.ProcessEnv,
  entries: readonly (readonly [string, string])[],
): NodeJS.ProcessEnv {
  const variables: NodeJS.ProcessEnv = { ...env, GIT_CONFIG_COUNT: String(entries.length) };
  entries.forEach(([key, value], index) => {
    variables[`GIT_CONFIG_KEY_${index}`] = key;
    variables[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return variables;
}

function runGit(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  stdin?: string,
): Promise<string | null> {
  return new Promise((resolvePromise) => {
    const child = execFile(
      "git",
      [...args],
      { cwd, env, timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 4 * 1024 * 1024 },
      (error, stdout) => resolvePromise(error ? null : stdout),
    );
    child.stdin?.on("error", () => {});
    child.stdin?.end(stdin ?? "");
  });
}

function kindOf(path: string): "file" | "directory" | "other" | "missing" {
  try {
    const stats = statSync(path);
    return stats.isFile() ? "file" : stats.isDirectory() ? "directory" : "other";
  } catch {
    return "missing";
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
