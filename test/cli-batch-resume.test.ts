import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readJournal } from "@forkloop/batch";
import { batchStateDir, runCliInProcess, startCli, waitForOutput } from "@forkloop/cli/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-resume-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ITEMS = 12;

describe("forkloop batch: crash safety", () => {
  it("kill -9 mid-batch, then --resume: no item lost, none completed twice, interrupted items redone", async () => {
    await mkdir(join(dir, "src"));
    for (let index = 0; index < ITEMS; index++) {
      await writeFile(
        join(dir, "src", `f${String(index).padStart(2, "0")}.ts`),
        `export const f${index} = ${index};\n`,
      );
    }
    // Slow replies (every SSE event paced) so the kill lands while items are in flight.
    const first = startCli(
      [
        "batch",
        "--files",
        "src/*.ts",
        "--prompt",
        "Summarize {{file}}",
        "--concurrency",
        "3",
        "--id",
        "crash",
      ],
      { cwd: dir, env: { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=40" } },
    );
    await waitForOutput(first.child, first.stderr, (text) => (text.match(/^ok /gm) ?? []).length >= 2);
    first.child.kill("SIGKILL");
    const killed = await first.exited;
    expect(killed.signal).toBe("SIGKILL");

    const batchDir = batchStateDir(dir, "crash");
    const before = await readJournal(batchDir);
    const completedBefore = new Set(
      before.records.flatMap((record) => (record.type === "completed" ? [record.id] : [])),
    );
    const claimedBefore = new Set(
      before.records.flatMap((record) => (record.type === "claimed" ? [record.id] : [])),
    );
    const interrupted = [...claimedBefore].filter((id) => !completedBefore.has(id));
    expect(completedBefore.size).toBeGreaterThanOrEqual(2);
    expect(completedBefore.size).toBeLessThan(ITEMS);
    expect(interrupted.length).toBeGreaterThanOrEqual(1);

    const resumed = await runCliInProcess(["batch", "--resume", "crash"], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`resuming; ${interrupted.length} interrupted item`);

    const after = await readJournal(batchDir);
    const completions = after.records.filter((record) => record.type === "completed");
    // Every item completed exactly once.
    expect(completions.map((record) => record.id).sort()).toEqual(
      after.records.flatMap((record) => (record.type === "enqueued" ? [record.item.id] : [])).sort(),
    );
    expect(new Set(completions.map((record) => record.id)).size).toBe(ITEMS);
    // Items finished before the kill were not run again; interrupted ones were redone as attempt 2.
    const claimsAfterResume = after.records
      .slice(before.records.length)
      .filter((record) => record.type === "claimed");
    expect(claimsAfterResume.some((record) => completedBefore.has(record.id))).toBe(false);
    for (const id of interrupted) {
      expect(completions.find((record) => record.id === id)?.attempt).toBe(2);
    }
    const results = (await readFile(join(batchDir, "results.jsonl"), "utf8")).trim().split("\n");
    expect(results).toHaveLength(ITEMS);
    expect(results.every((line) => JSON.parse(line).status === "succeeded")).toBe(true);
  });

  it("Ctrl+C stops the batch cleanly: exit 130, running items left for --resume, which finishes the rest", async () => {
    await mkdir(join(dir, "src"));
    for (let index = 0; index < 8; index++)
      await writeFile(join(dir, "src", `g${index}.ts`), `export const g${index} = 1;\n`);
    const run = startCli(
      [
        "batch",
        "--files",
        "src/*.ts",
        "--prompt",
        "Summarize {{file}}",
        "--concurrency",
        "2",
        "--id",
        "intr",
      ],
      { cwd: dir, env: { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=40" } },
    );
    await waitForOutput(run.child, run.stderr, (text) => /^ok /m.test(text));
    run.child.kill("SIGINT");
    const stopped = await run.exited;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toContain("interrupted: resume with `forkloop batch --resume intr`");
    expect(stopped.stdout).toMatch(/8 items: \d succeeded, 0 failed, \d not finished/);
    const resumed = await runCliInProcess(["batch", "--resume", "intr"], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/8 items: 8 succeeded, 0 failed/);
    const { records } = await readJournal(batchStateDir(dir, "intr"));
    expect(records.filter((record) => record.type === "completed")).toHaveLength(8);
  });

  it("a crash while enqueueing loses no item: resume lists the source again and enqueues what is missing", async () => {
    await mkdir(join(dir, "src"));
    for (let index = 0; index < 4; index++)
      await writeFile(join(dir, "src", `h${index}.ts`), `export const h${index} = 1;\n`);
    const args = ["batch", "--files", "src/*.ts", "--prompt", "Summarize {{file}}", "--id", "enq"];
    expect((await runCliInProcess(args, { cwd: dir })).code).toBe(0);
    // Rebuild the state a crash after two durable enqueue records would leave.
    const batchDir = batchStateDir(dir, "enq");
    const lines = (await readFile(join(batchDir, "journal.log"), "utf8")).split("\n");
    await writeFile(join(batchDir, "journal.log"), `${lines.slice(0, 2).join("\n")}\n`);
    await rm(join(batchDir, "enqueued.ok"));
    expect((await readJournal(batchDir)).records).toHaveLength(2);

    const resumed = await runCliInProcess(["batch", "--resume", "enq"], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/4 items: 4 succeeded, 0 failed/);
    const { records } = await readJournal(batchDir);
    expect(records.filter((record) => record.type === "enqueued")).toHaveLength(4);
    expect(records.filter((record) => record.type === "completed")).toHaveLength(4);
  });
});
