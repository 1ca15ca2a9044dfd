import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { walkFiles } from "../file-walker.js";
import { GitignoreFilter } from "../gitignore.js";
import { linearRegexEngine, type RegexEngine } from "../patterns/linear-regex.js";
import { realWorkspaceRoots } from "../workspace-paths.js";
import { compilePattern, type FileMatchRequest, matchFiles } from "./grep-text.js";
import { createGlobOverrides, createTypeFilter, globListError } from "./path-filter.js";
import type { GrepBackend, GrepOutcome, GrepSearch } from "./search.js";

export interface JsGrepBackendOptions {
  /**
   * Matches on this thread with another engine: the benchmark's and the tests' V8 RegExp for
   * "before". Default: re2js on a search thread of its own (R-S12, grep-thread.ts).
   */
  readonly engine?: RegexEngine;
}

/**
 * Grep in JavaScript, for machines without ripgrep: the same walk (gitignore, no symlinks, binary
 * files skipped), the same glob/type filters and the same result shape as the ripgrep backend.
 * Patterns are RE2 syntax, as ripgrep's are (Rust's regex crate is RE2-like), run in linear time
 * off the caller's thread, so a stop or a signal is answered during the longest search.
 */
export function createJsGrepBackend(options: JsGrepBackendOptions = {}): GrepBackend {
  return (search) => searchFiles(search, options.engine);
}

export const jsGrepBackend: GrepBackend = createJsGrepBackend();

async function searchFiles(search: GrepSearch, engine: RegexEngine | undefined): Promise<GrepOutcome> {
  const request: FileMatchRequest = {
    pattern: search.pattern,
    caseInsensitive: search.caseInsensitive,
    multiline: search.multiline,
    mode: search.mode,
    contextBefore: search.contextBefore,
    contextAfter: search.contextAfter,
    onlyMatching: search.onlyMatching === true,
    maxLines: search.maxLines,
    maxFileBytes: search.maxFileBytes,
    realRoots: realWorkspaceRoots(search.workspaceRoots),
  };
  // A pattern that does not compile is answered before any walk (the search thread compiles it again).
  const compiled = compilePattern(request, engine ?? linearRegexEngine);
  if ("error" in compiled) return { ok: false, error: compiled.error };
  const globError = globListError([...search.globs, ...search.typeGlobs]);
  if (globError !== undefined) return { ok: false, error: globError };

  const rootStats = await stat(search.root);
  let files: string[];
  if (rootStats.isFile()) files = [search.root];
  else {
    const filter = GitignoreFilter.forSearch(search.root, search.workspaceRoots);
    const overrides = createGlobOverrides(search.root, search.globs);
    const isOfType = createTypeFilter(search.typeGlobs);
    // ripgrep's order: a matching --glob decides outright; otherwise .gitignore, then --type.
    const decide = (path: string, isDirectory: boolean): boolean | undefined => {
      if (basename(path) === ".git") return false; // ripgrep backend: a last `--glob !.git`
      const verdict = overrides?.(path, isDirectory) ?? "none";
      if (verdict !== "none") return verdict === "include";
      if (!isDirectory && isOfType !== undefined && !isOfType(path)) return false;
      return undefined;
    };
    files = (await walkFiles(search.root, { filter, signal: search.signal, decide })).files;
  }
  if (engine !== undefined) return matchFiles(files, request, engine, () => search.signal.aborted);
  // The search thread's module loads at the first search (R-V2: not with the SDK).
  const { matchFilesOffThread } = await import("./grep-thread.js");
  return matchFilesOffThread(files, request, search.signal);
}
