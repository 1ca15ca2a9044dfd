// Prints vitest's JSON report as CI reads it: the 15 slowest test files (so a suite that grows
// is seen), then, last, the one plain line CI counts: "N passed, N failed".
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";

const SLOWEST_SHOWN = 15;

const file = process.argv[2];
if (!file || !existsSync(file)) {
  console.log("0 passed, 1 failed");
  console.error("no vitest report: the build, typecheck or lint step failed before the tests ran");
  process.exit(0);
}
const report = JSON.parse(readFileSync(file, "utf8"));
const files = (report.testResults ?? [])
  .map((result) => ({
    name: relative(process.cwd(), result.name),
    seconds: (result.endTime - result.startTime) / 1000,
  }))
  .filter((entry) => Number.isFinite(entry.seconds))
  .sort((a, b) => b.seconds - a.seconds);
if (files.length > 0) {
  console.log(`slowest test files (of ${files.length}):`);
  for (const entry of files.slice(0, SLOWEST_SHOWN)) {
    console.log(`${entry.seconds.toFixed(1).padStart(8)} s  ${entry.name}`);
  }
}
const failed = report.numFailedTests + (report.numRuntimeErrors ?? 0);
console.log(`${report.numPassedTests} passed, ${failed} failed`);
