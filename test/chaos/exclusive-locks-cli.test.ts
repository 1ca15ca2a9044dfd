import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readJournal } from "@forkloop/batch";
import { batchStateDir, runCli, startCli, streamJsonLines, waitForOutput } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-R5 through the spawned binary (50-trial races: exclusive-locks.test.ts on the lock calls,
 * exclusive-locks-cli-race.test.ts on whole command lines in 4 processes): 4 simultaneous
 * `forkloop batch --resume` of a batch killed with -9 (its lock names a dead owner), and 4
 * simultaneous `forkloop run --resume` of one session. Before the fix, 3 resumes ran 25 items
 * twice, and two resumes of a session corrupted it for every later resume.
 */
const ITEMS = 8;
const SLOW = { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=25" };
/** The resumes: the one that runs takes seconds, longer than the others take to start on a busy machine. */
const SLOWER = { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=120" };
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-chaos-locks-cli-"));
  await mkdir(join(dir, "src"));
  for (let index = 0; index < ITEMS; index++)
    await writeFile(join(dir, "src", `f${index}.ts`), `export const f${index} = ${index};\n`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts `args` four times at once; the exit codes, and each run's stderr. */
async function fourAtOnce(args: readonly string[]) {
  const runs = Array.from({ length: 4 }, () => startCli(args, { cwd: dir, env: SLOWER }));
  return Promise.all(runs.map((run) => run.exited));
}

describe("R-R5 chaos: simultaneous resumes through the built CLI", () => {
  it("4 × `batch --resume` of a kill -9'd batch: one runs, three exit 2 naming it; every item completed once", async () => {
    const batch = startCli(
      [
        "batch",
        "--files",
        "src/*.ts",
        "--prompt",
        "Summarize {{file}}",
        "--concurrency",
        "2",
        "--id",
        "race",
      ],
      { cwd: dir, env: SLOW },
    );
    await waitForOutput(batch.child, batch.stderr, (text) => /^ok /m.test(text));
    batch.child.kill("SIGKILL");
    await batch.exited;

    const results = await fourAtOnce(["batch", "--resume", "race"]);
    const ran = results.filter((result) => result.code === 0);
    const refused = results.filter((result) => result.code === 2);
    expect(ran, results.map((result) => result.stderr).join("\n---\n")).toHaveLength(1);
    expect(refused).toHaveLength(3);
    for (const result of refused) {
      // Bad input: one line, naming the owner and the fix.
      expect(result.stderr.trimEnd().split("\n"), result.stderr).toHaveLength(1);
      expect(result.stderr).toMatch(
        /^forkloop: batch race is in use by process \d+ on \S+ since \S+ \(forkloop batch --resume race\)\. Wait for it to finish, or stop it \(kill \d+\) and run the command again\.\n$/m,
      );
      expect(result.stdout).toBe("");
    }
    expect(ran[0]?.stderr).toMatch(/took over the lock of process \d+ .*, as process \d+ is gone/);
    const { records } = await readJournal(batchStateDir(dir, "race"));
    const completed = records.filter((record) => record.type === "completed").map((record) => record.id);
    expect(completed).toHaveLength(ITEMS);
    expect(new Set(completed).size).toBe(ITEMS);
  }, 120_000);

  it("4 × `run --resume S`: one runs, three exit 2 naming it; the session resumes cleanly afterwards", async () => {
    const first = await runCli(["run", "Summarize src/f0.ts", "--output-format", "stream-json"], {
      cwd: dir,
    });
    expect(first.code, first.stderr).toBe(0);
    const sessionId = streamJsonLines(first.stdout)[0]?.session_id ?? "";

    const results = await fourAtOnce(["run", "--resume", sessionId, "Summarize src/f1.ts"]);
    const ran = results.filter((result) => result.code === 0);
    const refused = results.filter((result) => result.code === 2);
    expect(ran, results.map((result) => result.stderr).join("\n---\n")).toHaveLength(1);
    expect(refused).toHaveLength(3);
    for (const result of refused) {
      expect(result.stderr.trimEnd().split("\n"), result.stderr).toHaveLength(1);
      expect(result.stderr).toContain(`forkloop: session ${sessionId} is in use by process `);
      expect(result.stderr).toContain(`(forkloop run --resume ${sessionId} Summarize src/f1.ts)`);
    }
    // Not corrupted: the API's rules hold for the next resume (the simulator answers a broken
    // conversation with a 400, exit 4).
    const after = await runCli(["run", "--resume", sessionId, "Summarize src/f2.ts"], { cwd: dir });
    expect(after.code, after.stderr).toBe(0);
  }, 120_000);
});
