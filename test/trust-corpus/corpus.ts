/**
 * The shape every class of the trust corpus shares (test/trust-corpus/*.cases.ts, run by
 * trust-corpus.test.ts). A case is one attack; a group plants a set of cases that do not disturb
 * one another and runs them through several surfaces (the built CLI's commands and `query()`, the
 * main agent, sub-agents and batch items, each permission mode), each run in a fresh copy. Cases
 * are judged on effects only — files, modes, processes, what the simulator was sent — never on
 * what forkloop says.
 */

/** The engineer whose area a case's protection is (for the holes file). */
export type Area = "trust-git-files" | "trust-sandbox" | "trust-patterns";

export interface CorpusCase {
  readonly id: string;
  readonly area: Area;
  /** What the attack does, in one line. */
  readonly what: string;
}

/** A case that got through, and the effect it left. */
export interface Through {
  readonly id: string;
  readonly effect: string;
}

export interface Surface {
  /** Names the surface in the test title: "forkloop run --permission-mode plan", "query() dontAsk" … */
  readonly label: string;
  /** Plants the group into fresh directories below `dir` and runs it; what got through. */
  run(dir: string): Promise<readonly Through[]>;
}

export interface CaseGroup {
  /** The test title's start, naming the requirement: "R-S7: forkloop's own git …". */
  readonly title: string;
  readonly cases: readonly CorpusCase[];
  readonly surfaces: readonly Surface[];
  /**
   * The positive control: the same payloads with the protection absent or bypassed in a way the
   * test controls (plain `git status`, plain `bash`, `--sandbox off` …). It must see the effect
   * of every case in `expect`, so the assertions above can fail.
   */
  readonly control?: {
    readonly label: string;
    readonly expect: readonly string[];
    run(dir: string): Promise<readonly Through[]>;
  };
}

/** Formats what got through for an assertion message. */
export function describeThrough(through: readonly Through[]): string[] {
  return through.map((entry) => `${entry.id}: ${entry.effect}`);
}
