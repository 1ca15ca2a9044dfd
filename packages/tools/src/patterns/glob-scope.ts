import { type Dirent, readdirSync } from "node:fs";
import { join } from "node:path";
import type { CompiledGlob } from "./linear-glob.js";

const SPECIAL = /[*?[\]{}()!@+\\]/;

/**
 * Where a glob's matches can be: the literal directories it starts with (`src/lib` of
 * `src/lib/*.ts`) and how many segments below them a match lies (`Infinity` with a `**` segment,
 * or a "/" inside braces or a group). Walks start at the base and stop at the depth, so a glob
 * costs the directories it can match in, not the whole tree.
 */
export function globScope(glob: string): { readonly base: string; readonly maxDepth: number } {
  if (glob.startsWith("!")) return { base: "", maxDepth: Number.POSITIVE_INFINITY };
  const segments = splitSegments(glob);
  if (segments === undefined) return { base: "", maxDepth: Number.POSITIVE_INFINITY };
  let literal = 0;
  while (literal < segments.length - 1 && !SPECIAL.test(segments[literal] as string)) literal++;
  const rest = segments.slice(literal);
  return {
    base: segments.slice(0, literal).join("/"),
    maxDepth: rest.includes("**") ? Number.POSITIVE_INFINITY : rest.length,
  };
}

/** The "/"-separated segments, or undefined when a "/" sits inside braces, brackets or a group. */
function splitSegments(glob: string): string[] | undefined {
  const segments: string[] = [];
  let current = "";
  let nesting = 0;
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index] as string;
    if (char === "\\") {
      current += glob.slice(index, index + 2);
      index++;
      continue;
    }
    if ("{([".includes(char)) nesting++;
    else if ("})]".includes(char) && nesting > 0) nesting--;
    if (char === "/" && nesting > 0) return undefined;
    if (char === "/") {
      segments.push(current);
      current = "";
    } else current += char;
  }
  segments.push(current);
  return segments.filter((segment, index) => segment !== "" || index === 0);
}

export type GlobExpansion =
  | { readonly ok: true; readonly paths: readonly string[] }
  | { readonly ok: false; readonly error: string };

/**
 * What a glob names below `root`, as bash's pathname expansion lists it (dot files included,
 * directories and symlinks too, symlinks not followed). Synchronous, for the permission check;
 * at most `maxVisited` entries are looked at, so a `**` over a huge tree (or `/**`) is a bounded
 * refusal rather than a long walk.
 */
export function expandGlobSync(
  root: string,
  glob: string,
  matcher: CompiledGlob,
  limits: { readonly maxVisited: number; readonly maxMatches: number },
): GlobExpansion {
  const { base, maxDepth } = globScope(glob);
  const paths: string[] = [];
  let visited = 0;
  const pending: { dir: string; relative: string; depth: number }[] = [
    { dir: join(root, base), relative: base, depth: 0 },
  ];
  while (pending.length > 0) {
    const { dir, relative, depth } = pending.pop() as (typeof pending)[number];
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // Missing or unreadable: bash leaves the word as it is.
    }
    for (const entry of entries) {
      if (++visited > limits.maxVisited)
        return { ok: false, error: `the glob ${glob} would look at more than ${limits.maxVisited} entries` };
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (matcher.matches(path)) {
        paths.push(join(root, path));
        if (paths.length > limits.maxMatches)
          return { ok: false, error: `the glob ${glob} matches more than ${limits.maxMatches} files` };
      }
      if (entry.isDirectory() && depth + 1 < maxDepth)
        pending.push({ dir: join(dir, entry.name), relative: path, depth: depth + 1 });
    }
  }
  return { ok: true, paths };
}
