/** One Grep request as both backends see it (already validated and confined). */
export interface GrepSearch {
  readonly pattern: string;
  /** Absolute path of the directory (or single file) to search. */
  readonly root: string;
  readonly workspaceRoots: readonly string[];
  /** Include/exclude globs (`!` prefix excludes); no slash = matched against the file name. */
  readonly globs: readonly string[];
  /** File-name globs of the requested `type` (see file-types.ts), empty when none. */
  readonly typeGlobs: readonly string[];
  readonly caseInsensitive: boolean;
  readonly multiline: boolean;
  readonly mode: "content" | "files_with_matches" | "count";
  readonly contextBefore: number;
  readonly contextAfter: number;
  /** Content mode: each matching line's matched parts are collected (Grep's `-o`, rg --only-matching). */
  readonly onlyMatching?: boolean;
  /** Content mode stops collecting after this many output lines (memory bound). */
  readonly maxLines: number;
  /** Files larger than this are skipped (and counted), so one huge file cannot exhaust memory. */
  readonly maxFileBytes: number;
  readonly signal: AbortSignal;
}

export interface GrepLine {
  readonly lineNumber: number;
  readonly text: string;
  /** false for a context line (-A/-B/-C). */
  readonly isMatch: boolean;
  /** With `onlyMatching`: a matching line's non-empty matched parts, left to right. */
  readonly parts?: readonly string[];
}

export interface GrepFileResult {
  readonly path: string;
  /** Number of matching lines (ripgrep's --count). */
  readonly matchingLines: number;
  /** Filled in content mode only, in line order. */
  readonly lines: readonly GrepLine[];
}

/** Files a search left out, by reason (R-S4: said in the output). */
export interface GrepSkipped {
  readonly tooLarge: readonly string[];
  /** Regular files with more than one hard link: one of the names may be outside the workspace (R-S4). */
  readonly hardLinked: readonly string[];
  /** Files whose opened real path is outside the workspace (a symlink swapped in during the search). */
  readonly outside: readonly string[];
}

export type GrepOutcome =
  | {
      readonly ok: true;
      readonly files: readonly GrepFileResult[];
      readonly truncated: boolean;
      readonly skipped?: GrepSkipped;
    }
  | { readonly ok: false; readonly error: string };

/** A search implementation: ripgrep when installed, the JavaScript one otherwise (R-T3). */
export type GrepBackend = (search: GrepSearch) => Promise<GrepOutcome>;
