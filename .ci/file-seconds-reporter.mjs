// A vitest reporter that writes each test file's seconds — its tests and hooks, a beforeAll's
// install included, which vitest's JSON report leaves out (its import is not counted) — to
// file-seconds.json beside the JSON report (`--outputFile.json`), longest first, files of 3 s or
// more. .ci/run prints the slowest from it; copied to .ci/file-seconds.json it is the order
// vitest.config.ts starts files in. Beside it, file-cpu.json: each file's CPU seconds, which
// .ci/file-cpu-setup.mjs records in the test processes (children waited for included).
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const SHORTEST_KEPT_S = 3;

export default class FileSecondsReporter {
  onInit(vitest) {
    this.root = vitest.config.root;
    const outputs = vitest.config.outputFile;
    const report = typeof outputs === "object" ? outputs?.json : undefined;
    this.out = report === undefined ? undefined : join(dirname(report), "file-seconds.json");
    if (this.out === undefined) return;
    // The test processes are forked after this: they inherit the variable.
    this.cpuLines = join(dirname(report), "file-cpu.jsonl");
    rmSync(this.cpuLines, { force: true });
    process.env.FORKLOOP_FILE_CPU = this.cpuLines;
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
    this.writeCpu();
  }

  /** file-cpu.json: every file's CPU seconds, most first. */
  writeCpu() {
    if (!existsSync(this.cpuLines)) return;
    const cpu = new Map();
    for (const line of readFileSync(this.cpuLines, "utf8").split("\n")) {
      if (line === "") continue;
      const { file, cpu: seconds } = JSON.parse(line);
      cpu.set(file, (cpu.get(file) ?? 0) + seconds);
    }
    const sorted = [...cpu].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const rounded = sorted.map(([file, seconds]) => [file, Math.round(seconds * 10) / 10]);
    writeFileSync(
      join(dirname(this.out), "file-cpu.json"),
      `${JSON.stringify(Object.fromEntries(rounded), null, 2)}\n`,
    );
  }
}
