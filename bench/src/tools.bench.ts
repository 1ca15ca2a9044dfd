/**
 * Tools benchmarks (R-T3): Grep over a generated 20,000-file tree in files_with_matches and
 * content modes (the ripgrep backend and the JavaScript fallback side by side when rg is on PATH;
 * otherwise the JavaScript backend alone, with GNU grep -rl as a native reference), Glob over the
 * same tree, and Read / Edit throughput against the bare synchronous fs calls they wrap (the
 * ratio is the cost of confinement, read-state checks and formatting).
 * Everything runs in a temp dir that is removed at the end.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createGrepTool,
  createRipgrepBackend,
  editTool,
  findRipgrep,
  globTool,
  jsGrepBackend,
  readTool,
} from "@forkloop/tools";
import { type BenchResult, compare, percentile, timeRuns } from "./harness.js";
import {
  call,
  contextFor,
  DIRS,
  FILES_PER_DIR,
  generateTree,
  IGNORED_FILES,
  LINES_PER_FILE,
} from "./source-tree.js";

const median = (samples: readonly number[]): number => percentile(samples, 50);

export async function run(): Promise<BenchResult[]> {
  const root = mkdtempSync(join(tmpdir(), "forkloop-tools-bench-"));
  try {
    generateTree(root);
    const context = contextFor(root);
    const results: BenchResult[] = [];
    const treeNote = `${DIRS * FILES_PER_DIR} files (+${IGNORED_FILES} gitignored)`;

    // Grep, both output modes: the JS fallback always; ripgrep side by side when rg is on PATH.
    const searches: readonly { mode: string; input: Record<string, unknown> }[] = [
      { mode: "files_with_matches", input: { pattern: "MARK\\(needle\\)" } },
      { mode: "content -C 1", input: { pattern: "MARK\\(needle\\)", output_mode: "content", "-C": 1 } },
    ];
    const jsGrep = createGrepTool({ backend: jsGrepBackend });
    const rg = findRipgrep();
    const rgGrep = rg === undefined ? undefined : createGrepTool({ backend: createRipgrepBackend(rg) });
    for (const { mode, input } of searches) {
      const jsMs = median(await timeRuns(() => call(jsGrep, input, context), 5, 1));
      if (rgGrep === undefined) {
        results.push({
          name: `tools.grep.${mode} (JS backend; rg not on PATH)`,
          metric: "median",
          value: jsMs,
          unit: "ms",
          notes: `${treeNote}; ripgrep was not on PATH, so the ripgrep backend was not measured`,
        });
        continue;
      }
      // Same tree, same input: the two backends must print the same thing (grep-parity.test.ts).
      const [jsText, rgText] = [
        String((await call(jsGrep, input, context)).content),
        String((await call(rgGrep, input, context)).content),
      ];
      if (jsText !== rgText) throw new Error(`Grep ${mode}: the JS and ripgrep backends disagree`);
      const rgMs = median(await timeRuns(() => call(rgGrep, input, context), 5, 1));
      results.push(
        compare(
          `tools.grep.${mode} (JS fallback / ripgrep backend, ms; the ratio is how much slower the fallback is)`,
          "median",
          "ms",
          { label: `ripgrep backend (${rg})`, value: rgMs },
          { label: "JS fallback", value: jsMs },
          `${treeNote}; both through the Grep tool (confinement, gitignore, mtime sort, formatting)`,
        ),
      );
    }
    if (rgGrep === undefined) {
      // No ripgrep: GNU grep over the same files is the only native reference available.
      const gnuGrep = median(
        await timeRuns(
          () => {
            execFileSync("grep", [
              "-rlE",
              "MARK\\(needle\\)",
              "--exclude-dir=node_modules",
              "--exclude-dir=.git",
              root,
            ]);
          },
          5,
          1,
        ),
      );
      results.push({
        name: "tools.grep.files_with_matches reference: GNU grep -rl (no .gitignore parsing, no mtime sort)",
        metric: "median",
        value: gnuGrep,
        unit: "ms",
        notes: treeNote,
      });
    }

    // Glob over the same tree.
    const glob = median(await timeRuns(() => call(globTool, { pattern: "**/file7*.ts" }, context), 5, 1));
    results.push({
      name: "tools.glob **/file7*.ts",
      metric: "median",
      value: glob,
      unit: "ms",
      notes: treeNote,
    });

    // Read throughput: the tool (confinement, binary sniff, numbering, read-state record) vs raw fs.
    const readTarget = join(root, "src", "module0", "file7.ts");
    const READS = 2_000;
    const toolReads = await timeRuns(() => call(readTool, { file_path: readTarget }, context), READS, 50);
    const rawReads = await timeRuns(() => readFileSync(readTarget, "utf8").split("\n"), READS, 50);
    const opsPerSecond = (samples: readonly number[]) =>
      (1000 * samples.length) / samples.reduce((a, b) => a + b, 0);
    results.push(
      compare(
        "tools.read throughput (Read tool / readFileSync+split)",
        "ops/s",
        "ops/s",
        { label: "readFileSync + split", value: opsPerSecond(rawReads) },
        { label: "Read tool", value: opsPerSecond(toolReads) },
        `${LINES_PER_FILE + 1}-line file`,
      ),
    );

    // Edit throughput: each edit flips a token back and forth; the tool re-checks freshness each time.
    const editTarget = join(root, "src", "module1", "file7.ts");
    const editContext = contextFor(root);
    await call(readTool, { file_path: editTarget }, editContext);
    let flip = false;
    const EDITS = 1_000;
    const toolEdits = await timeRuns(
      async () => {
        flip = !flip;
        const [from, to] = flip ? ["value3 =", "value3b ="] : ["value3b =", "value3 ="];
        await call(editTool, { file_path: editTarget, old_string: from, new_string: to }, editContext);
      },
      EDITS,
      20,
    );
    const rawTarget = join(root, "src", "module2", "file7.ts");
    let rawFlip = false;
    const rawEdits = await timeRuns(
      () => {
        rawFlip = !rawFlip;
        const [from, to] = rawFlip ? ["value3 =", "value3b ="] : ["value3b =", "value3 ="];
        writeFileSync(rawTarget, readFileSync(rawTarget, "utf8").replace(from, to));
      },
      EDITS,
      20,
    );
    if (!readFileSync(editTarget, "utf8").includes("value3"))
      throw new Error("edit bench corrupted its file");
    results.push(
      compare(
        "tools.edit throughput (Edit tool / readFileSync+replace+writeFileSync)",
        "ops/s",
        "ops/s",
        { label: "readFileSync+replace+writeFileSync", value: opsPerSecond(rawEdits) },
        { label: "Edit tool", value: opsPerSecond(toolEdits) },
        "the tool also confines the path, checks read-before-write, keeps encoding and returns a snippet",
      ),
    );
    return results;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
