/**
 * R-S12: what the linear-time regex engine costs. Grep's JavaScript backend over the
 * generated 20,000-file tree with re2js (now) and with V8's backtracking RegExp (before, kept as
 * `backtrackingRegexEngine` in @forkloop/tools/testing, on the caller's thread; now re2js runs on
 * Grep's search thread, whose CPU time counts too), side by side in one run, their outputs
 * checked equal first; then the two engines alone on ordinary patterns, line by line over the
 * tree's text, as Grep's content mode tests lines. CPU time (user + system) per run: the machine
 * is shared, and wall time there mostly measures waiting for a core.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGrepTool, createJsGrepBackend, linearRegexEngine } from "@forkloop/tools";
import { backtrackingRegexEngine } from "@forkloop/tools/testing";
import { type BenchResult, compare, cpuRuns, percentile } from "./harness.js";
import { call, contextFor, DIRS, FILES_PER_DIR, generateTree } from "./source-tree.js";

/** Ordinary patterns: a literal with escapes, classes and counts, case-insensitive, word boundaries. */
const PATTERNS = [
  { label: "literal MARK\\(needle\\)", pattern: "MARK\\(needle\\)" },
  { label: "classes compute\\(\\d+, 7\\d*, 1\\)", pattern: "compute\\(\\d+, 7\\d*, 1\\)" },
  { label: "case-insensitive (?i)edge CASE", pattern: "(?i)edge CASE" },
  { label: "word boundary \\bvalue2\\d\\b", pattern: "\\bvalue2\\d\\b" },
] as const;

const median = (samples: readonly number[]): number => percentile(samples, 50);

export async function run(): Promise<BenchResult[]> {
  const root = mkdtempSync(join(tmpdir(), "forkloop-grep-engine-bench-"));
  try {
    generateTree(root);
    const context = contextFor(root);
    const results: BenchResult[] = [];
    // Now: re2js on Grep's search thread, as users run it; before: V8's RegExp on the caller's thread.
    const linear = createGrepTool({ backend: createJsGrepBackend() });
    const backtracking = createGrepTool({
      backend: createJsGrepBackend({ engine: backtrackingRegexEngine }),
    });
    const tree = `${DIRS * FILES_PER_DIR} files`;

    // One timed run a side (after the run that checks both print the same): the tree is the load.
    const searches = [
      { ...(PATTERNS[0] as (typeof PATTERNS)[number]), mode: "files_with_matches", extra: {} },
      { ...(PATTERNS[0] as (typeof PATTERNS)[number]), mode: "content", extra: { output_mode: "content" } },
      { ...(PATTERNS[3] as (typeof PATTERNS)[number]), mode: "files_with_matches", extra: {} },
    ] as const;
    for (const { label, pattern, mode, extra } of searches) {
      {
        const input = { pattern, ...extra };
        const [now, before] = [
          String((await call(linear, input, context)).content),
          String((await call(backtracking, input, context)).content),
        ];
        if (now !== before) throw new Error(`Grep ${label} ${mode}: the two engines disagree`);
        const backtrackingMs = median(await cpuRuns(() => call(backtracking, input, context), 1, 0));
        const linearMs = median(await cpuRuns(() => call(linear, input, context), 1, 0));
        results.push(
          compare(
            `grep-engine: Grep over ${tree}, ${mode}, ${label} (re2js / V8 RegExp, CPU ms; the ratio is the bound's cost)`,
            "median",
            "ms",
            { label: "V8 backtracking RegExp (before)", value: backtrackingMs },
            { label: "re2js on the search thread, linear time (now)", value: linearMs },
            `${before.split("\n").length} output lines, equal for both; through the Grep tool (walk, gitignore, reads, mtime sort)`,
          ),
        );
      }
    }

    // The engines alone: every line of 2,000 files, tested one by one.
    const lines: string[] = [];
    for (let dir = 0; dir < 20; dir++)
      for (let file = 0; file < FILES_PER_DIR; file++)
        lines.push(...readFileSync(join(root, "src", `module${dir}`, `file${file}.ts`), "utf8").split("\n"));
    for (const { label, pattern } of PATTERNS) {
      const compiled = [linearRegexEngine, backtrackingRegexEngine].map((engine) => {
        const result = engine(pattern, {});
        if (!result.ok) throw new Error(result.error);
        return result.regex;
      });
      const [now, before] = compiled as [(typeof compiled)[number], (typeof compiled)[number]];
      const count = (regex: typeof now) => lines.filter((line) => regex.test(line)).length;
      if (count(now) !== count(before)) throw new Error(`${label}: the engines count different lines`);
      const linesPerMs = (samples: readonly number[]) => lines.length / median(samples);
      results.push(
        compare(
          `grep-engine: engine alone, ${label}, lines tested per CPU ms (re2js / V8 RegExp)`,
          "median",
          "lines/ms",
          { label: "V8 backtracking RegExp", value: linesPerMs(await cpuRuns(() => count(before), 3, 1)) },
          { label: "re2js", value: linesPerMs(await cpuRuns(() => count(now), 3, 1)) },
          `${lines.length} lines of generated TypeScript, ${count(now)} matching`,
        ),
      );
    }
    return results;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
