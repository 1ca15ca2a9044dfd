/**
 * Tools benchmarks (issue 4): Grep over a generated 20,000-file tree in files_with_matches and
 * content modes (the ripgrep backend and the JavaScript fallback side by side when rg is on PATH;
 * otherwise the JavaScript backend alone, with GNU grep -rl as a native reference), Glob over the
 * same tree, and Read / Edit throughput against the bare synchronous fs calls they wrap (the
 * ratio is the cost of confinement, read-state checks and formatting).
 * Everything runs in a temp dir that is removed at the end.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentState, createAgentState, type Tool, type ToolUseContext } from "@forkloop/loop-core";
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

const DIRS = 200;
const FILES_PER_DIR = 100;
const IGNORED_FILES = 2_000;
const LINES_PER_FILE = 30;

function generateTree(root: string): void {
  writeFileSync(join(root, ".gitignore"), "node_modules/\n");
  for (let dir = 0; dir < DIRS; dir++) {
    const dirPath = join(root, "src", `module${dir}`);
    mkdirSync(dirPath, { recursive: true });
    for (let file = 0; file < FILES_PER_DIR; file++) {
      const lines: string[] = [];
      for (let line = 0; line < LINES_PER_FILE; line++) {
        lines.push(`export const value${line} = compute(${dir}, ${file}, ${line}); // plain line of code`);
      }
      // One file in 50 holds the needle, so files_with_matches returns 400 paths.
      if (file % 50 === 7) lines.splice(LINES_PER_FILE / 2, 0, "// MARK(needle): handle the edge case");
      writeFileSync(join(dirPath, `file${file}.ts`), `${lines.join("\n")}\n`);
    }
  }
  // Gitignored: a good walker never opens these.
  const ignored = join(root, "node_modules", "dep");
  mkdirSync(ignored, { recursive: true });
  for (let file = 0; file < IGNORED_FILES; file++)
    writeFileSync(join(ignored, `f${file}.js`), "needle needle\n");
}

function contextFor(
  root: string,
  agentState: AgentState = createAgentState(),
): ToolUseContext & { toolUseId: string } {
  return {
    cwd: root,
    workspaceRoots: [root],
    tools: [],
    abortController: new AbortController(),
    agentId: "main",
    agentState,
    options: { model: "bench", permissionMode: "default" },
    toolUseId: "toolu_bench",
  };
}

async function call(
  tool: Tool,
  input: Record<string, unknown>,
  context: ToolUseContext & { toolUseId: string },
) {
  const parsed = tool.inputSchema.parse(input);
  const result = await tool.call(parsed, context);
  if (result.isError === true) throw new Error(`${tool.name} failed: ${String(result.content)}`);
  return result;
}

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
