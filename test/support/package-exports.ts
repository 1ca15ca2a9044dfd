/**
 * The workspace's public entries (each package.json "exports" key) and who imports their names:
 * what the exports snapshot and the unused-exports check read (R-A6). Only value exports are seen
 * here — a module's runtime keys; type-only exports vanish at runtime and are left to tsc.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

export const repoRoot = join(import.meta.dirname, "..", "..");

export interface PackageEntry {
  /** e.g. "@forkloop/sdk". */
  readonly packageName: string;
  /** The package's directory relative to the repository, e.g. "packages/sdk". */
  readonly dir: string;
  /** The "exports" key: "." or "./testing". */
  readonly subpath: string;
  /** What a program writes to import it: "@forkloop/sdk/errors". */
  readonly specifier: string;
  /** The file the entry loads from source (its "source" condition, else its default). */
  readonly file: string;
}

interface ExportConditions {
  readonly source?: string;
  readonly default?: string;
}

function workspaceDirs(): string[] {
  return ["packages", "apps"].flatMap((group) =>
    readdirSync(join(repoRoot, group), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${group}/${entry.name}`),
  );
}

/**
 * Every public entry of every workspace package. An entry that is the package's program (the CLI's
 * `./main` runs the command line when loaded) is a bin, not a module to list names of.
 */
export function packageEntries(): PackageEntry[] {
  return workspaceDirs().flatMap((dir) => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, dir, "package.json"), "utf8")) as {
      name: string;
      exports?: Record<string, ExportConditions>;
    };
    return Object.entries(manifest.exports ?? {}).flatMap(([subpath, conditions]) => {
      if (conditions.source === undefined) return [];
      return [
        {
          packageName: manifest.name,
          dir,
          subpath,
          specifier: subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
          file: join(dir, conditions.source),
        },
      ];
    });
  });
}

/** The entry's value exports, sorted: what `import * as m` shows a program. */
export async function runtimeNames(entry: PackageEntry): Promise<string[]> {
  const loaded = (await import(entry.specifier)) as Record<string, unknown>;
  return Object.keys(loaded).sort();
}

// A package's `bundle/` is built (untracked) output: its imports are no file's use.
const skippedDirs = new Set(["node_modules", "dist", "bundle", ".git", ".turbo", ".build", "results"]);
const codeFile = /\.(?:ts|mts|cts|js|mjs|cjs)$/;

function codeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return skippedDirs.has(entry.name) ? [] : codeFiles(join(dir, entry.name));
    return codeFile.test(entry.name) ? [join(dir, entry.name)] : [];
  });
}

/** One name a file takes from an entry: under `name` there, as `as` in the file (re-exports). */
interface Taken {
  readonly name: string;
  readonly as: string;
}

/** One file's use of one entry: the names it lists, or `"all"` (`export *` re-exports). */
interface Use {
  readonly specifier: string;
  readonly names: readonly Taken[] | "all";
  /** Names it takes without a list (`import * as m`, a default, `await import(...)`): judged by the file's text. */
  readonly byText: boolean;
  readonly reexport: boolean;
}

// Import and export statements by pattern (the TypeScript in this repository has no parser API):
// a clause is `{ a, b as c }`, `* as m`, a default, or a default and one of those.
const importStatement =
  /(?:^|[\s;])import\s+(?:type\s+)?((?:[\w$]+\s*,\s*)?(?:\{[^}]*\}|\*\s*as\s+[\w$]+)|[\w$]+)\s*from\s*["']([^"']+)["']/g;
const exportStatement =
  /(?:^|[\s;])export\s+(?:type\s+)?(\{[^}]*\}|\*(?:\s*as\s+[\w$]+)?)\s*from\s*["']([^"']+)["']/g;
const dynamicImport = /\bimport\(\s*["']([^"']+)["']\s*\)/g;

function listed(clause: string): Taken[] {
  const braces = /\{([^}]*)\}/.exec(clause)?.[1] ?? "";
  return braces
    .split(",")
    .map((part) => part.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, "").trim())
    .filter((part) => part !== "" && !part.startsWith("type "))
    .map((part) => {
      const [name = "", as = name] = part.split(/\s+as\s+/);
      return { name, as };
    });
}

function usesIn(text: string): Use[] {
  const uses: Use[] = [];
  for (const [, clause = "", specifier = ""] of text.matchAll(importStatement)) {
    const byText = !clause.startsWith("{");
    uses.push({ specifier, names: listed(clause), byText, reexport: false });
  }
  for (const [, clause = "", specifier = ""] of text.matchAll(exportStatement)) {
    uses.push({
      specifier,
      names: clause.startsWith("*") ? "all" : listed(clause),
      byText: false,
      reexport: true,
    });
  }
  for (const [, specifier = ""] of text.matchAll(dynamicImport)) {
    uses.push({ specifier, names: [], byText: true, reexport: false });
  }
  return uses;
}

/**
 * For each entry (by specifier), its value exports that no code file outside its own package
 * imports. An entry's own re-exports (the `forkloop` package's `export * from "@forkloop/sdk"`, the
 * CLI's names from `@forkloop/batch`) pass a name on: it counts as used only if someone imports it
 * from the re-exporting entry.
 */
export async function unusedExports(entries: readonly PackageEntry[]): Promise<Map<string, string[]>> {
  const bySpecifier = new Map(entries.map((entry) => [entry.specifier, entry]));
  const byFile = new Map(entries.map((entry) => [entry.file, entry]));
  const names = new Map<string, string[]>();
  for (const entry of entries) names.set(entry.specifier, await runtimeNames(entry));

  const used = new Map(entries.map((entry) => [entry.specifier, new Set<string>()]));
  // Names an entry's own source re-exports from another entry: used there once used here.
  const passOn: { from: string; to: string; names: readonly Taken[] | "all" }[] = [];
  for (const path of codeFiles(repoRoot)) {
    const file = relative(repoRoot, path);
    const text = readFileSync(path, "utf8");
    if (!text.includes("forkloop")) continue;
    const reexporter = byFile.get(file);
    for (const use of usesIn(text)) {
      const target = bySpecifier.get(use.specifier);
      if (!target || file.startsWith(`${target.dir}/`)) continue;
      if (reexporter && use.reexport) {
        passOn.push({ from: reexporter.specifier, to: target.specifier, names: use.names });
        continue;
      }
      const seen = used.get(target.specifier) ?? new Set<string>();
      const targetNames = names.get(target.specifier) ?? [];
      if (use.names === "all") for (const name of targetNames) seen.add(name);
      else for (const { name } of use.names) seen.add(name);
      if (use.byText) {
        for (const name of targetNames)
          if (new RegExp(`\\b${name.replace(/\$/g, "\\$")}\\b`).test(text)) seen.add(name);
      }
    }
  }
  // Propagate through re-exports until nothing changes (chains are short).
  for (let changed = true; changed; ) {
    changed = false;
    for (const { from, to, names: passed } of passOn) {
      const fromUsed = used.get(from) ?? new Set<string>();
      const toUsed = used.get(to) ?? new Set<string>();
      const pairs = passed === "all" ? (names.get(to) ?? []).map((name) => ({ name, as: name })) : passed;
      for (const { name, as } of pairs) {
        if (fromUsed.has(as) && !toUsed.has(name)) {
          toUsed.add(name);
          changed = true;
        }
      }
    }
  }
  return new Map(
    entries.map((entry) => [
      entry.specifier,
      (names.get(entry.specifier) ?? []).filter((name) => !used.get(entry.specifier)?.has(name)),
    ]),
  );
}

/**
 * For each entry (by specifier), its value exports that no file imports at all: not outside its
 * package (`unusedExports`) and not inside it either — no module, test or tool of the package takes
 * the name from another file (a re-export only passes it on; a use in the defining file alone needs
 * no export). Such an export is dead: the name stays in its file, unexported, or goes with its code.
 */
export async function deadExports(entries: readonly PackageEntry[]): Promise<Map<string, string[]>> {
  const unused = await unusedExports(entries);
  const usedInside = new Map<string, Set<string>>();
  for (const dir of new Set(entries.map((entry) => entry.dir))) {
    const seen = new Set<string>();
    const candidates = entries
      .filter((entry) => entry.dir === dir)
      .flatMap((entry) => unused.get(entry.specifier) ?? []);
    const own = new Set(entries.filter((entry) => entry.dir === dir).map((entry) => entry.specifier));
    for (const path of codeFiles(join(repoRoot, dir))) {
      const text = readFileSync(path, "utf8");
      for (const use of usesIn(text)) {
        if (use.reexport) continue;
        if (use.names !== "all") for (const { name } of use.names) seen.add(name);
        // A namespace or dynamic import of the package's own modules: judged by the file's text,
        // where the name is not one the file declares itself.
        if (!use.byText || !(use.specifier.startsWith(".") || own.has(use.specifier))) continue;
        for (const name of candidates) {
          const word = name.replace(/\$/g, "\\$");
          const declared = new RegExp(`\\b(?:function\\*?|const|let|var|class|enum)\\s+${word}\\b`);
          if (new RegExp(`\\b${word}\\b`).test(text) && !declared.test(text)) seen.add(name);
        }
      }
    }
    usedInside.set(dir, seen);
  }
  return new Map(
    entries.map((entry) => [
      entry.specifier,
      (unused.get(entry.specifier) ?? []).filter((name) => !usedInside.get(entry.dir)?.has(name)),
    ]),
  );
}

const exportedDeclaration =
  /^export\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|const|let|class|enum|abstract\s+class)\s+([\w$]+)/gm;

/**
 * R-A6: the values a package's source modules export (`export function|const|let|class|enum …`)
 * that no other file names at all, as `file name` lines: an export kept for nobody. Entries are
 * left to `deadExports` (their names are the package's API) and tests are not sources. Judged by
 * word: a name any other code file mentions counts as used, so a dead export can be missed, a live
 * one never flagged.
 */
export function moduleDeadExports(entries: readonly PackageEntry[], root = repoRoot): string[] {
  const entryFiles = new Set(entries.map((entry) => join(root, entry.file)));
  const filesWithWord = new Map<string, number>();
  const sources: { path: string; text: string }[] = [];
  for (const path of codeFiles(root)) {
    const text = readFileSync(path, "utf8");
    for (const word of new Set(text.match(/[\w$]+/g) ?? []))
      filesWithWord.set(word, (filesWithWord.get(word) ?? 0) + 1);
    const source = relative(root, path);
    if (/^(packages|apps)\/[^/]+\/src\//.test(source) && !/\.test\.ts$/.test(source) && !entryFiles.has(path))
      sources.push({ path: source, text });
  }
  return sources.flatMap(({ path, text }) =>
    [...text.matchAll(exportedDeclaration)]
      .map((match) => match[1]!)
      .filter((name) => (filesWithWord.get(name) ?? 0) <= 1)
      .map((name) => `${path} ${name}`),
  );
}
