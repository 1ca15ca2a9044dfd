import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";

/** Claude Code's limit: an imported file may import others, five hops deep. */
export const MAX_IMPORT_DEPTH = 5;

/**
 * The files a memory file imports with Claude Code's `@path` syntax, in order: a word that
 * starts with `@` and names a path — relative to the importing file (`@docs/style.md`,
 * `@./x.md`, `@../x.md`), absolute, or in the home directory (`@~/notes.md`). Not in code: text
 * inside fenced blocks and inline code spans is not read for imports (`@decorator` in an example
 * stays text), nor is an e-mail address (the `@` must start a word).
 */
export function memoryImports(text: string, fromFile: string, home: string = homedir()): string[] {
  const paths: string[] = [];
  let fenced = false;
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const prose = line.replace(/`+[^`]*`+/g, " ");
    for (const match of prose.matchAll(/(?:^|\s)@((?:[^\s\\]|\\ )+)/g)) {
      const raw = (match[1] as string).replace(/\\ /g, " ").replace(/[.,;:!?)]+$/, "");
      const path = importPath(raw, fromFile, home);
      if (path !== undefined) paths.push(path);
    }
  }
  return paths;
}

function importPath(raw: string, fromFile: string, home: string): string | undefined {
  if (raw === "" || raw.startsWith("@")) return undefined;
  if (raw.startsWith("~/")) return join(home, raw.slice(2));
  if (isAbsolute(raw)) return raw;
  // A bare word (`@alice`) is a mention, not a file: a path has a slash or an extension.
  if (!raw.includes("/") && !/\.[A-Za-z0-9]+$/.test(raw)) return undefined;
  return resolve(dirname(fromFile), raw);
}
