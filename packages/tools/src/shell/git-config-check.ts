import { readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

/**
 * Keys a repository's own config may hold for read-only git commands to be approved without
 * asking (R-S2). The repository's `.git/config` is as hostile as its files: `core.fsmonitor`,
 * `diff.external`, `diff.<driver>.textconv`, `filter.<driver>.clean`, `log.showSignature` +
 * `gpg.program`, `core.hooksPath`, `include.path` … make `git status`, `git diff` or `git log` run
 * a program. An allowlist, because git keeps adding such keys: a key not listed means "ask".
 */
const SAFE_KEYS: readonly RegExp[] = [
  /^core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks|autocrlf|eol|safecrlf|quotepath|checkstat|trustctime|untrackedcache|splitindex|commitgraph|abbrev|compression|loosecompression|bigfilethreshold|sparsecheckout|sparsecheckoutcone|multipackindex|preloadindex|fscache|longpaths|whitespace|warnambiguousrefs)$/,
  /^remote\.[^.]+(\.[^.]+)*\.(url|pushurl|fetch|push|tagopt|prune|prunetags|mirror|promisor|partialclonefilter|skipdefaultupdate|skipfetchall)$/,
  /^branch\.[^.]+(\.[^.]+)*\.(remote|pushremote|merge|rebase|description|vscode-merge-base)$/,
  /^submodule\.[^.]+(\.[^.]+)*\.(url|active|path|branch|shallow)$/,
  /^user\.(name|email|signingkey)$/,
  /^extensions\.[a-z]+$/,
  /^(pull|push|fetch|merge|rebase|status|color|advice|init|gc|maintenance|index|feature|rerere|i18n|column|help|clean|checkout|stash|tag|commit|blame|grep|transfer|pack|repack|lfs)\.[a-z0-9]+$/,
  /^diff\.(renames|algorithm|mnemonicprefix|noprefix|context|indentheuristic|colormoved|interhunkcontext|statgraphwidth|submodule|ignoresubmodules|suppressblankempty|wordregex)$/,
  /^log\.(date|decorate|abbrevcommit|follow|mailmap|graphcolors|initialdecorationset|excludedecoration|showroot)$/,
];

/** Keys whose sections look safe above but that do run programs. */
const UNSAFE_KEYS =
  /^(gc\.auto(detach)?|maintenance\.strategy|status\.submodulesummary|merge\.tool|fetch\.(fsckobjects)|lfs\.[a-z]*(program|command|cmd)|commit\.template|pull\.twohead|pull\.octopus|log\.showsignature)$/;

/**
 * Why read-only git commands may not be approved in `cwd`'s repository, or undefined when its
 * config is plain. Finds the git directory as git does (a `.git` directory or `gitdir:` file, or
 * a bare repository itself), then reads `config`, `config.worktree` and the common dir's config.
 */
export function gitConfigProblem(cwd: string): string | undefined {
  const gitDir = findGitDir(cwd);
  if (gitDir === undefined) return undefined;
  if (typeof gitDir !== "string") return gitDir.problem;
  const dirs = [gitDir];
  const common = readText(join(gitDir, "commondir"));
  if (common !== undefined) {
    const path = common.trim();
    dirs.push(isAbsolute(path) ? path : resolve(gitDir, path));
  }
  for (const dir of dirs) {
    for (const name of ["config", "config.worktree"]) {
      const text = readText(join(dir, name));
      if (text === undefined) continue;
      const problem = configProblem(text);
      if (problem !== undefined)
        return `${join(dir, name)} sets ${problem}, which can make git run a program`;
    }
  }
  return undefined;
}

type FoundGitDir = string | { readonly problem: string } | undefined;

function findGitDir(start: string): FoundGitDir {
  let dir = resolve(start);
  for (;;) {
    const dotGit = join(dir, ".git");
    const kind = statKind(dotGit);
    if (kind === "directory") return dotGit;
    if (kind === "file") {
      const match = /^gitdir:\s*(.+?)\s*$/m.exec(readText(dotGit) ?? "");
      if (match === null) return { problem: `${dotGit} is a file that names no git directory` };
      const target = match[1] as string;
      return isAbsolute(target) ? target : resolve(dir, target);
    }
    // A bare repository (HEAD, objects/, refs/) is used by git from inside it.
    if (
      statKind(join(dir, "HEAD")) === "file" &&
      statKind(join(dir, "objects")) === "directory" &&
      statKind(join(dir, "refs")) === "directory"
    ) {
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The first key of a git config file that is not known to be safe, as `section.key`. */
export function configProblem(text: string): string | undefined {
  let section = "";
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/.exec(line);
    if (header !== null) {
      const name = (header[1] as string).toLowerCase();
      section = header[2] === undefined ? name : `${name}.${header[2]}`;
      const rest = (header[3] ?? "").trim();
      if (rest === "" || rest.startsWith("#") || rest.startsWith(";")) continue;
      const inline = keyOf(section, rest);
      if (inline !== undefined && !isSafe(inline)) return inline;
      continue;
    }
    if (line.startsWith("[")) return "an unreadable section header";
    const key = keyOf(section, line);
    if (key === undefined) return "an unreadable line";
    if (!isSafe(key)) return key;
  }
  return undefined;
}

function keyOf(section: string, line: string): string | undefined {
  const match = /^([A-Za-z][A-Za-z0-9-]*)\s*(=|$)/.exec(line);
  if (match === null || section === "") return undefined;
  const dot = section.indexOf(".");
  // Section and key names are case-insensitive, subsections are not.
  const base = dot === -1 ? section : `${section.slice(0, dot).toLowerCase()}${section.slice(dot)}`;
  return `${base}.${(match[1] as string).toLowerCase()}`;
}

function isSafe(key: string): boolean {
  const lower = key.toLowerCase();
  return !UNSAFE_KEYS.test(lower) && SAFE_KEYS.some((pattern) => pattern.test(lower));
}

function statKind(path: string): "file" | "directory" | "other" | "missing" {
  try {
    const stats = statSync(path);
    return stats.isFile() ? "file" : stats.isDirectory() ? "directory" : "other";
  } catch {
    return "missing";
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
