// A vitest setup file: when FORKLOOP_FILE_CPU names a file (the CI's reporter sets it), each test
// file's CPU seconds — its process's user + system time, worker threads included, plus the
// children it waited for (spawned CLIs, simulators, redis-server, npm) — are appended to it as
// one JSON line. On 2 cores the CPU the whole suite spends is a floor under its wall time that no
// order of files lowers; these lines say which files spend it (file-seconds-reporter.mjs sums them).
import { appendFileSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { afterAll } from "vitest";

const { FORKLOOP_FILE_CPU: out } = process.env;
/** Clock ticks a second in /proc (USER_HZ: 100 on Linux). */
const TICKS = 100;

/** This process's CPU seconds and its waited-for children's, from /proc/self/stat. */
function cpuSeconds() {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // Fields after the command name (which may hold spaces) in parentheses: utime is the 14th field.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
  return (utime + stime + cutime + cstime) / TICKS;
}

if (out) {
  // Measured from here: the test file's import, its hooks and its tests. In a tier that keeps its
  // processes from file to file (isolate: false), the next file counts from this one's end.
  let start = cpuSeconds();
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures a hook uses from this pattern.
  afterAll(({}, suite) => {
    const end = cpuSeconds();
    const file = "filepath" in suite ? relative(process.cwd(), suite.filepath) : suite.name;
    appendFileSync(out, `${JSON.stringify({ file, cpu: Math.round((end - start) * 10) / 10 })}\n`);
    start = end;
  });
}
