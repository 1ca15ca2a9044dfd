import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchStateDir, runCliInProcess, streamJsonLines, withSim } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inParallel, spread } from "./seeded.js";

/**
 * R-R1 chaos, simulator half: whole batches and `forkloop run`s through the CLI (in-process) against
 * a `forkloop sim` process with seeded random faults, so every request's record can be checked
 * afterwards (`/_sim/requests`): the simulator answers a request that breaks the API's rules
 * (an unanswered tool_use, a tool_result for nothing) with a 400, so there must be none.
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-chaos-sim-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface ResultRow {
  readonly status: string;
  readonly turns: number;
  readonly apiRetries: number;
}

async function results(batchDir: string): Promise<ResultRow[]> {
  const text = await readFile(join(batchDir, "results.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as ResultRow);
}

describe("R-R1 chaos: the simulator's faults", () => {
  it("5 % of streams dropped mid-way: a 1,000-item batch at concurrency 256 completes every item, retries in the report", async () => {
    const cwd = join(dir, "drops");
    await mkdir(cwd, { recursive: true });
    const items = Array.from({ length: 1000 }, (_, n) => JSON.stringify({ n })).join("\n");
    await writeFile(join(cwd, "items.jsonl"), `${items}\n`);
    await withSim(cwd, ["--faults", "random:seed=5,pdrop=0.05", "--latency", "none"], async (sim) => {
      const started = Date.now();
      const batch = await runCliInProcess(
        [
          "batch",
          "--items",
          "items.jsonl",
          "--prompt",
          "Reply to item {{item.n}} in one line.",
          "--concurrency",
          "256",
          "--id",
          "drops",
        ],
        { cwd, env: sim.env },
      );
      const wallMs = Date.now() - started;
      expect(batch.code, batch.stderr.slice(-2000)).toBe(0);
      const rows = await results(batchStateDir(cwd, "drops"));
      const records = (await sim.requests()).filter((record) => record.path === "/v1/messages");
      const drops = records.filter((record) => record.fault === "drop");
      const report = JSON.parse(await readFile(join(batchStateDir(cwd, "drops"), "report.json"), "utf8"));
      console.log(
        `chaos/drops: 1000 items in ${(wallMs / 1000).toFixed(1)} s, ${records.length} requests, ${drops.length} dropped mid-stream, ` +
          `${report.totals.apiRetries} retries in the report; per item requests ${JSON.stringify(spread(rows.map((row) => row.turns + row.apiRetries)))}`,
      );
      expect(rows).toHaveLength(1000);
      expect(rows.every((row) => row.status === "succeeded")).toBe(true);
      expect(drops.length).toBeGreaterThan(20);
      // Each drop happened after the stream had started (status 200 sent) and was retried; the
      // report also counts retries of connections the busy simulator reset before reading them.
      expect(drops.every((record) => record.status === 200)).toBe(true);
      expect(report.totals.apiRetries).toBeGreaterThanOrEqual(drops.length);
      expect(records.filter((record) => record.status === 400)).toEqual([]);
    });
  }, 240_000);

  it("random faults at realistic timing: a 200-file batch and 6 runs end typed, no request breaks the API's rules", async () => {
    const cwd = join(dir, "mixed");
    await mkdir(join(cwd, "src"), { recursive: true });
    for (let index = 0; index < 200; index++) {
      await writeFile(
        join(cwd, "src", `m${String(index).padStart(3, "0")}.ts`),
        `export const m${index} = ${index};\n`,
      );
    }
    const faults =
      "random:seed=7,p429=0.02,p529=0.03,p500=0.02,pmid_stream_error=0.03,pdrop=0.05,pslow=0.03,pmax_tokens=0.02,retry_after=0.05,slow_ms=40";
    await withSim(cwd, ["--faults", faults, "--latency", "realistic", "--seed", "7"], async (sim) => {
      const [batch, ...runs] = await inParallel(3, [
        () =>
          runCliInProcess(
            [
              "batch",
              "--files",
              "src/*.ts",
              "--prompt",
              "Summarize {{file}}",
              "--concurrency",
              "128",
              "--max-turns",
              "6",
              "--id",
              "mixed",
            ],
            { cwd, env: sim.env },
          ),
        ...Array.from(
          { length: 6 },
          (_, index) => () =>
            runCliInProcess(
              [
                "run",
                `Summarize src/m${String(index).padStart(3, "0")}.ts`,
                "--output-format",
                "stream-json",
              ],
              {
                cwd,
                env: sim.env,
              },
            ),
        ),
      ]);
      expect(batch?.stderr ?? "").not.toMatch(/unexpected error|FATAL/);
      expect([0, 6]).toContain(batch?.code);
      const rows = await results(batchStateDir(cwd, "mixed"));
      expect(rows).toHaveLength(200);
      expect(rows.every((row) => row.status === "succeeded" || row.status === "failed")).toBe(true);
      for (const run of runs) {
        expect(run.stderr).not.toMatch(/unexpected error|FATAL/);
        expect(streamJsonLines(run.stdout).at(-1)?.type).toBe("result");
      }
      const records = (await sim.requests()).filter((record) => record.path === "/v1/messages");
      const faultsSeen: Record<string, number> = {};
      for (const record of records)
        if (record.fault) faultsSeen[record.fault] = (faultsSeen[record.fault] ?? 0) + 1;
      const perItem = rows.map((row) => row.turns + row.apiRetries);
      console.log(
        `chaos/mixed: 200 batch items + 6 runs, ${records.length} requests, faults ${JSON.stringify(faultsSeen)}; ` +
          `items succeeded ${rows.filter((row) => row.status === "succeeded").length}; per item requests ${JSON.stringify(spread(perItem))}`,
      );
      expect(records.filter((record) => record.status === 400)).toEqual([]);
      // Bounded: 6 turns, each request retried at most 10 times (and a max_tokens recovery or two).
      expect(Math.max(...perItem)).toBeLessThanOrEqual(6 * 11);
    });
  }, 240_000);
});
