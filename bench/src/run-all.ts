/**
 * `npm run bench`: runs every `*.bench.js` beside this file (or those named on the command line,
 * e.g. `npm run bench -- sim loop`), prints a Markdown table and writes each bench's own figures
 * to `bench/results/<bench>.json` and `.md`. Only a full run (no names) writes
 * `bench/results/latest.json` and `latest.md`: they are the figures of one run side by side, and
 * a partial run that rewrote them left a table of three rows named as the last full run.
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type BenchResult, toMarkdown } from "./harness.js";

interface BenchModule {
  run(): Promise<BenchResult[]>;
}

const here = dirname(fileURLToPath(import.meta.url));
const resultsDir = join(here, "..", "results");
/** Names the benches are also known by (the name the CLI start-up comparison was asked for). */
const ALIASES: Readonly<Record<string, string>> = { "cli-startup": "startup" };
const only = process.argv.slice(2).map((name) => ALIASES[name] ?? name);

const known = readdirSync(here)
  .filter((name) => name.endsWith(".bench.js"))
  .map((name) => name.replace(/\.bench\.js$/, ""))
  .sort();
const unknown = only.filter((name) => !known.includes(name));
if (unknown.length > 0) {
  // A misspelt name ran nothing and printed an empty table with exit 0.
  console.error(`npm run bench: no bench named ${unknown.join(", ")}; the benches are: ${known.join(", ")}`);
  process.exit(2);
}
const files = known
  .filter((name) => only.length === 0 || only.includes(name))
  .map((name) => `${name}.bench.js`);

/** One bench's figures in a file of its own, so each can be read (and committed) alone. */
function writeBenchResult(bench: string, own: readonly BenchResult[]): void {
  mkdirSync(resultsDir, { recursive: true });
  const meta = { date: new Date().toISOString(), node: process.version, bench };
  writeFileSync(join(resultsDir, `${bench}.json`), `${JSON.stringify({ ...meta, results: own }, null, 2)}\n`);
  writeFileSync(join(resultsDir, `${bench}.md`), `${toMarkdown(own)}\n`);
}

const results: BenchResult[] = [];
const failures: { bench: string; error: string }[] = [];
for (const file of files) {
  const started = performance.now();
  process.stderr.write(`bench ${file} … `);
  try {
    const module = (await import(pathToFileURL(join(here, file)).href)) as BenchModule;
    const own = await module.run();
    results.push(...own);
    writeBenchResult(file.replace(/\.bench\.js$/, ""), own);
    process.stderr.write(`done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  } catch (error) {
    // One broken benchmark must not hide the figures of the others.
    failures.push({
      bench: file,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
    process.stderr.write("FAILED\n");
  }
}

const table = toMarkdown(results);
console.log(table);
for (const failure of failures) console.error(`\n${failure.bench} failed:\n${failure.error}`);
process.exitCode = failures.length > 0 ? 1 : 0;
if (only.length === 0) writeFullRun();

function writeFullRun(): void {
  mkdirSync(resultsDir, { recursive: true });
  const meta = { date: new Date().toISOString(), node: process.version, cpus: cpus().length };
  writeFileSync(
    join(resultsDir, "latest.json"),
    `${JSON.stringify({ ...meta, results, failures }, null, 2)}\n`,
  );
  writeFileSync(join(resultsDir, "latest.md"), `${table}\n`);
}
