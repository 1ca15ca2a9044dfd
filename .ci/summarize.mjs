// Prints vitest's JSON report as CI reads it: the 15 slowest test files (so a suite that grows
// is seen), the 15 spending the most CPU, then, last, the one plain line CI counts: "N passed, N failed". The seconds come from
// file-seconds.json beside the report (file-seconds-reporter.mjs) when there is one: the JSON
// report's own file times leave hooks out (an 82 s beforeAll showed as 3 s).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const SLOWEST_SHOWN = 15;

const file = process.argv[2];
if (!file || !existsSync(file)) {
  console.log("0 passed, 1 failed");
  console.error("no vitest report: the build, typecheck or lint step failed before the tests ran");
  process.exit(0);
}
const report = JSON.parse(readFileSync(file, "utf8"));
const secondsFile = join(dirname(file), "file-seconds.json");
const files = existsSync(secondsFile)
  ? Object.entries(JSON.parse(readFileSync(secondsFile, "utf8"))).map(([name, seconds]) => ({
      name,
      seconds,
    }))
  : (report.testResults ?? [])
      .map((result) => ({
        name: relative(process.cwd(), result.name),
        seconds: (result.endTime - result.startTime) / 1000,
      }))
      .filter((entry) => Number.isFinite(entry.seconds))
      .sort((a, b) => b.seconds - a.seconds);
if (files.length > 0) {
  console.log(`slowest test files (of ${report.testResults?.length ?? files.length}):`);
  for (const entry of files.slice(0, SLOWEST_SHOWN)) {
    console.log(`${entry.seconds.toFixed(1).padStart(8)} s  ${entry.name}`);
  }
  if (existsSync(secondsFile))
    console.log(`every file's seconds: ${secondsFile} (.ci/file-seconds.json's source)`);
}
// CPU seconds (file-cpu-setup.mjs): on 2 cores, half the suite's CPU is a floor under its wall time.
const cpuFile = join(dirname(file), "file-cpu.json");
if (existsSync(cpuFile)) {
  const cpu = Object.entries(JSON.parse(readFileSync(cpuFile, "utf8")));
  const total = cpu.reduce((sum, [, seconds]) => sum + seconds, 0);
  console.log(`most CPU (of ${total.toFixed(0)} CPU seconds in the test files):`);
  for (const [name, seconds] of cpu.slice(0, SLOWEST_SHOWN)) {
    console.log(`${seconds.toFixed(1).padStart(8)} s  ${name}`);
  }
  console.log(`every file's CPU seconds: ${cpuFile}`);
}
const failed = report.numFailedTests + (report.numRuntimeErrors ?? 0);
console.log(`${report.numPassedTests} passed, ${failed} failed`);
