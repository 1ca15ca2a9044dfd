// A vitest reporter that writes each test file's seconds — its tests and hooks, a beforeAll's
// install included, which vitest's JSON report leaves out (its import is not counted) — to
// file-seconds.json beside the JSON report (`--outputFile.json`), longest first, files of 3 s or
// more. .ci/run prints the slowest from it; copied to .ci/file-seconds.json it is the order
// vitest.config.ts starts files in.
import { writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const SHORTEST_KEPT_S = 3;

export default class FileSecondsReporter {
  onInit(vitest) {
    this.root = vitest.config.root;
    const outputs = vitest.config.outputFile;
    const report = typeof outputs === "object" ? outputs?.json : undefined;
    this.out = report === undefined ? undefined : join(dirname(report), "file-seconds.json");
  }

  onTestRunEnd(testModules) {
    if (this.out === undefined) return;
    const rows = testModules.map((module) => [
      relative(this.root, module.moduleId),
      Math.round(module.diagnostic().duration / 1000),
    ]);
    const kept = rows
      .filter(([, seconds]) => seconds >= SHORTEST_KEPT_S)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    writeFileSync(this.out, `${JSON.stringify(Object.fromEntries(kept), null, 2)}\n`);
  }
}
