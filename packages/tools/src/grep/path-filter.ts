import { basename, relative, sep } from "node:path";
import picomatch from "picomatch";

/**
 * ripgrep's `--glob` semantics: a glob without "/" matches the file name at any depth, one with
 * "/" matches the path relative to the search root; `!glob` excludes; when any include glob is
 * given a file must match one. The type filter is a separate include list (ANDed).
 */
export function createPathFilter(root: string, globs: readonly string[], typeGlobs: readonly string[]) {
  const includes = globs.filter((glob) => !glob.startsWith("!")).map((glob) => compile(glob));
  const excludes = globs.filter((glob) => glob.startsWith("!")).map((glob) => compile(glob.slice(1)));
  const types = typeGlobs.map((glob) => compile(glob));
  return (path: string): boolean => {
    const relativePath = relative(root, path).split(sep).join("/");
    const name = basename(path);
    const test = (matcher: Matcher): boolean => matcher.matcher(matcher.onName ? name : relativePath);
    if (excludes.some(test)) return false;
    if (includes.length > 0 && !includes.some(test)) return false;
    return types.length === 0 || types.some(test);
  };
}

interface Matcher {
  readonly onName: boolean;
  readonly matcher: (path: string) => boolean;
}

function compile(glob: string): Matcher {
  return { onName: !glob.includes("/"), matcher: picomatch(glob.replace(/^\//, ""), { dot: true }) };
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
