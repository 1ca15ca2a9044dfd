import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { MAIN_USAGE } from "@forkloop/cli";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const SKIPPED_DIRS = new Set(["node_modules", "dist", ".git", ".turbo", "release", "results", ".forkloop"]);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return SKIPPED_DIRS.has(name) ? [] : markdownFiles(path);
    return name.endsWith(".md") ? [path] : [];
  });
}

/**
 * The file paths a doc names: markdown link targets, and code spans that look like a path in
 * the repository (a `/` and a file extension, no placeholders such as `<id>`, `~`, `*` or `{a,b}`;
 * not a dot directory like `.claude/settings.json`, which names a user's or a project's file).
 */
function namedPaths(text: string): string[] {
  const links = [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((match) => match[1] ?? "");
  const spans = [...text.matchAll(/`([^`\s]+)`/g)]
    .map((match) => match[1] ?? "")
    .filter((span) => /\//.test(span) && /\.(ts|mjs|js|json|md|jsonl|yml)$/.test(span))
    .filter((span) => !/[<>~*{}$]|^\.|^\//.test(span) && !span.startsWith("http"));
  return [...links.filter((link) => !/^[a-z]+:/.test(link)), ...spans];
}

/**
 * A path resolves against the doc's directory, its package's directory or `src/` there (a
 * package README's file list names modules by their path under src), or the repository root.
 */
function exists(doc: string, path: string): boolean {
  const packageDir = join(root, relative(root, doc).split("/").slice(0, 2).join("/"));
  return [dirname(doc), packageDir, join(packageDir, "src"), root].some((base) =>
    existsSync(join(base, path)),
  );
}

describe("docs name only files the repository contains", () => {
  for (const doc of markdownFiles(root)) {
    it(relative(root, doc), () => {
      const missing = namedPaths(readFileSync(doc, "utf8")).filter((path) => !exists(doc, path));
      expect(missing).toEqual([]);
    });
  }
});

describe("the root README is where a newcomer starts: it names every package and every command", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");

  it("its architecture table has a row for each directory under packages/ and apps/", () => {
    const directories = ["packages", "apps"].flatMap((top) =>
      readdirSync(join(root, top)).map((name) => `${top}/${name}`),
    );
    const rows = [...readme.matchAll(/^\| `((?:packages|apps)\/[^`]+)` \|/gm)].map((match) => match[1]);
    expect(rows.sort()).toEqual(directories.sort());
  });

  it("the apps/cli row lists the commands `forkloop --help` lists", () => {
    const commands = [...MAIN_USAGE.matchAll(/^ {2}([a-z]+) /gm)].map((match) => match[1]);
    // "the `forkloop` command: `run`, `batch`, …"
    const row = /^\| `apps\/cli` \|[^:]*:(.*)$/m.exec(readme)?.[1] ?? "";
    const listed = [...row.matchAll(/`([a-z]+)`/g)].map((match) => match[1]);
    expect(listed.sort()).toEqual(commands.sort());
  });
});

describe("docs name only commands the repository has", () => {
  const scripts = Object.keys(
    (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> })
      .scripts,
  );
  const benches = readdirSync(join(root, "bench", "src"))
    .filter((name) => name.endsWith(".bench.ts"))
    .map((name) => name.slice(0, -".bench.ts".length));
  const commands = [...MAIN_USAGE.matchAll(/^ {2}([a-z]+) /gm)].map((match) => match[1] ?? "");

  /** What a doc runs that does not exist: `npm run X`, `npm run bench -- NAME…`, `forkloop COMMAND`. */
  function unknownCommands(text: string): string[] {
    const unknown: string[] = [];
    for (const [, script = ""] of text.matchAll(/\bnpm run ([\w:-]+)/g))
      if (!scripts.includes(script)) unknown.push(`npm run ${script}`);
    for (const [, names = ""] of text.matchAll(/\bnpm run bench -- ([a-z0-9 -]+)/g))
      for (const name of names.trim().split(/\s+/))
        if (!benches.includes(name)) unknown.push(`npm run bench -- ${name}`);
    for (const [, command = ""] of text.matchAll(/`forkloop ([a-z][a-z-]*)/g))
      if (!commands.includes(command)) unknown.push(`forkloop ${command}`);
    return unknown;
  }

  it("the check sees npm scripts, benches and forkloop commands", () => {
    const sample =
      "`npm run build`, `npm run nope`, `npm run bench -- loop nope`, `forkloop run`, `forkloop nope`";
    expect(unknownCommands(sample)).toEqual(["npm run nope", "npm run bench -- nope", "forkloop nope"]);
  });

  for (const doc of markdownFiles(root)) {
    it(`${relative(root, doc)}: every npm script, bench and forkloop command it names exists`, () => {
      expect(unknownCommands(readFileSync(doc, "utf8"))).toEqual([]);
    });
  }
});
