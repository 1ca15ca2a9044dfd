import { access, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readJournal } from "@forkloop/batch";
import { batchStateDir, runCli, startCli, waitForOutput } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seeded } from "./seeded.js";

/**
 * R-R4: 20 `kill -9`s at seeded random moments of one batch — while enqueueing, claiming,
 * running, settling — each followed by `--resume`: no item lost, none completed twice.
 */
const ITEMS = 24;
const KILLS = 20;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-chaos-kill-"));
  await mkdir(join(dir, "src"));
  for (let index = 0; index < ITEMS; index++) {
    await writeFile(
      join(dir, "src", `k${String(index).padStart(2, "0")}.ts`),
      `export const k${index} = ${index};\n`,
    );
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("R-R4 chaos: kill -9 and resume", () => {
  it(`${KILLS} random kill -9s of a batch, each followed by --resume: 0 items lost, 0 completed twice`, async () => {
    const random = seeded(911);
    // Paced replies (about a second per item) so a kill lands while items are in flight.
    const env = { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=25" };
    const fresh = [
      "batch",
      "--files",
      "src/*.ts",
      "--prompt",
      "Summarize {{file}}",
      "--concurrency",
      "4",
      "--id",
      "k9",
    ];
    const batchDir = batchStateDir(dir, "k9");
    let killed = 0;
    let finishedEarly = 0;
    for (let cycle = 0; killed < KILLS && cycle < 2 * KILLS; cycle++) {
      // A kill before the batch existed (its directory appears atomically with batch.json) means
      // starting it again; otherwise it is resumed.
      const exists = await access(join(batchDir, "batch.json")).then(
        () => true,
        () => false,
      );
      const child = startCli(exists ? ["batch", "--resume", "k9"] : fresh, { cwd: dir, env });
      // The first kill may land before the batch has even enqueued its items; later ones anywhere.
      const delayMs = cycle === 0 ? 150 + random() * 400 : 100 + random() * 900;
      const started =
        cycle === 0
          ? Promise.resolve("")
          : waitForOutput(child.child, child.stderr, (text) => text.includes("state in"));
      const outcome = await Promise.race([
        started.then(() => new Promise((resolve) => setTimeout(() => resolve("kill"), delayMs))),
        child.exited.then(() => "exited"),
      ]).catch(() => "exited");
      if (outcome === "kill") {
        child.child.kill("SIGKILL");
        killed++;
      } else {
        finishedEarly++;
      }
      const exited = await child.exited;
      expect(exited.stderr).not.toMatch(/unexpected error|FATAL/);
    }
    const last = await runCli(["batch", "--resume", "k9"], { cwd: dir, env });
    expect(last.code, last.stderr).toBe(0);

    const { records, contents } = await readJournal(batchDir);
    expect(contents.damage).toBeUndefined();
    const enqueued = records.flatMap((record) => (record.type === "enqueued" ? [record.item.id] : []));
    const completed = records.flatMap((record) => (record.type === "completed" ? [record.id] : []));
    const attempts = records.filter((record) => record.type === "claimed").length;
    console.log(
      `chaos/kill: ${killed} kill -9s (${finishedEarly} runs ended before their kill), ${ITEMS} items, ${attempts} attempts, ${completed.length} completions`,
    );
    expect(killed).toBe(KILLS);
    expect(new Set(enqueued).size).toBe(ITEMS);
    expect([...completed].sort()).toEqual([...new Set(enqueued)].sort()); // every item once, none twice
    const rows = (await readFile(join(batchDir, "results.jsonl"), "utf8")).trim().split("\n");
    expect(rows.map((row) => JSON.parse(row).status)).toEqual(Array(ITEMS).fill("succeeded"));
  }, 240_000);
});
