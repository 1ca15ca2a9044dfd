// Prints vitest's JSON report as the one plain line CI counts: "N passed, N failed".
import { existsSync, readFileSync } from "node:fs";

const file = process.argv[2];
if (!file || !existsSync(file)) {
  console.log("0 passed, 1 failed");
  console.error("no vitest report: the build, typecheck or lint step failed before the tests ran");
  process.exit(0);
}
const report = JSON.parse(readFileSync(file, "utf8"));
const failed = report.numFailedTests + (report.numRuntimeErrors ?? 0);
console.log(`${report.numPassedTests} passed, ${failed} failed`);
