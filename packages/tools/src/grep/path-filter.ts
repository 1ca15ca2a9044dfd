import { basename, relative, sep } from "node:path";
import { compileGlob } from "../patterns/linear-glob.js";

/** How a `--glob` list judges one path, before .gitignore and `type` are consulted. */
export type OverrideVerdict = "include" | "exclude" | "none";

/**
 * ripgrep's `--glob` semantics (its "overrides"): globs are gitignore-style and relative to the
 * search root (no "/" = the name at any depth); `!glob` excludes; the last matching glob wins.
 * A match decides outright, as in ripgrep: an included file is searched even when it is
 * gitignored or not of the requested `type`, an excluded directory is not walked. With at least
 * one include glob, a file matching none is excluded (a directory is not: it is walked).
 */
export function createGlobOverrides(
  root: string,
  globs: readonly string[],
): ((path: string, isDirectory: boolean) => OverrideVerdict) | undefined {
  if (globs.length === 0) return undefined;
  const matchers = globs.map((glob) =>
    glob.startsWith("!")
      ? { ...compileOrThrow(glob.slice(1)), include: false }
      : { ...compileOrThrow(glob), include: true },
  );
  const hasIncludes = matchers.some((matcher) => matcher.include);
  return (path, isDirectory) => {
    const relativePath = relative(root, path).split(sep).join("/");
    const name = basename(path);
    for (let index = matchers.length - 1; index >= 0; index--) {
      const matcher = matchers[index] as Matcher & { include: boolean };
      if (matcher.directoryOnly && !isDirectory) continue;
      if (matcher.matcher(matcher.onName ? name : relativePath))
        return matcher.include ? "include" : "exclude";
    }
    return hasIncludes && !isDirectory ? "exclude" : "none";
  };
}

/** The `type` filter: a file must match one of the type's globs (by name). */
export function createTypeFilter(typeGlobs: readonly string[]): ((path: string) => boolean) | undefined {
  if (typeGlobs.length === 0) return undefined;
  const matchers = typeGlobs.map((glob) => compileOrThrow(glob));
  return (path) => {
    const name = basename(path);
    return matchers.some((matcher) => matcher.matcher(name));
  };
}

interface Matcher {
  readonly onName: boolean;
  /** A glob ending in "/" matches directories only (gitignore syntax). */
  readonly directoryOnly: boolean;
  readonly matcher: (path: string) => boolean;
}

/** Why a glob of the list cannot be used, or undefined when all compile (checked before the walk). */
export function globListError(globs: readonly string[]): string | undefined {
  for (const glob of globs) {
    const compiled = compileGlob(matchedPart(glob.startsWith("!") ? glob.slice(1) : glob));
    if (!compiled.ok) return `glob: ${compiled.error}`;
  }
  return undefined;
}

const matchedPart = (glob: string): string =>
  (glob.endsWith("/") ? glob.slice(0, -1) : glob).replace(/^\//, "");

/** Globs are the model's: matched on RE2 in linear time (R-S12); globListError has vetted them. */
function compileOrThrow(glob: string): Matcher {
  const compiled = compileGlob(matchedPart(glob));
  if (!compiled.ok) throw new Error(compiled.error);
  const matcher = compiled.glob;
  const body = glob.endsWith("/") ? glob.slice(0, -1) : glob;
  return {
    onName: !body.includes("/"),
    directoryOnly: glob.endsWith("/"),
    matcher: (path) => matcher.matches(path),
  };
}

/** Splits Grep's `glob` parameter on whitespace, and on commas outside braces (Claude Code's rule). */
export function splitGlobs(glob: string | undefined): string[] {
  if (glob === undefined) return [];
  const globs: string[] = [];
  for (const word of glob.split(/\s+/).filter((part) => part.length > 0)) {
    if (word.includes("{")) globs.push(word);
    else globs.push(...word.split(",").filter((part) => part.length > 0));
  }
  return globs;
}
