import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  batchStateDir,
  runCliInProcess as runCli,
  type SimHandle,
  startCliInProcess,
  startSimInProcess,
} from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-R7: everything a batch is started with is kept. Before, `--max-budget-usd 2`, Ctrl+C at
 * $0.26, then the resume command forkloop printed finished the batch at $5.99 (exit 0), and
 * `--concurrency 128` resumed at 8: batch.json kept neither.
 */
let dir: string;
let sim: SimHandle;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-chaos-settings-"));
  await mkdir(join(dir, "src"));
  for (let index = 0; index < 16; index++)
    await writeFile(
      join(dir, "src", `f${String(index).padStart(2, "0")}.ts`),
      `export const f${index} = ${index};\n`,
    );
  sim = await startSimInProcess(dir, ["--faults", "slow@1+:slow_ms=30"]);
});
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

const batchArgs = (id: string, ...more: string[]) => [
  "batch",
  "--files",
  "src/*.ts",
  "--prompt",
  "Summarize {{file}}",
  "--id",
  id,
  ...more,
];

/** Starts `args`, interrupts it (as Ctrl+C does) once `okLines` items have succeeded; its result. */
async function interruptAfter(args: readonly string[], okLines: number) {
  const cli = startCliInProcess(args, { cwd: dir, env: sim.env });
  await cli.waitFor(cli.stderr, (text) => (text.match(/^ok /gm) ?? []).length >= okLines);
  return cli.stop();
}

interface Report {
  readonly totals: { items: number; succeeded: number; pending: number; costUsd: number };
}
const report = async (id: string) =>
  JSON.parse(await readFile(join(batchStateDir(dir, id), "report.json"), "utf8")) as Report;

/** The most model requests the simulator had in flight at once since `from` (its request log). */
async function peakInFlight(from: number): Promise<number> {
  const requests = (await sim.requests()).filter(
    (record) => record.path === "/v1/messages" && record.startedAt >= from,
  );
  let peak = 0;
  for (const request of requests) {
    const at = request.startedAt;
    peak = Math.max(
      peak,
      requests.filter((other) => other.startedAt <= at && (other.endedAt ?? Number.POSITIVE_INFINITY) > at)
        .length,
    );
  }
  return peak;
}

describe("R-R7 chaos: the settings a batch starts with hold across runs", () => {
  it("--max-budget-usd: Ctrl+C at a partial spend, then the printed resume command — the budget still holds, counted over both runs", async () => {
    const budget = 0.06; // about three items at today's tool definitions
    const first = await interruptAfter(
      batchArgs("budget", "--concurrency", "1", "--max-budget-usd", String(budget)),
      2,
    );
    expect(first.code, first.stderr).toBe(130);
    const printed = /interrupted: resume with `forkloop (batch --resume budget)`/.exec(first.stderr)?.[1];
    expect(printed).toBe("batch --resume budget");
    const spentFirst = (await report("budget")).totals.costUsd;
    expect(spentFirst).toBeLessThan(budget);

    const resumed = await runCli(printed!.split(" "), { cwd: dir, env: sim.env });
    expect(resumed.code, resumed.stderr).toBe(10);
    expect(resumed.stderr).toMatch(/--max-budget-usd 0\.06 reached: \d+ items not started/);
    const totals = (await report("budget")).totals;
    expect(totals.pending).toBeGreaterThan(0);
    // Both runs together: at most the budget (an item is expected to cost the average so far,
    // so the last one may pass it by the difference).
    expect(totals.costUsd).toBeLessThanOrEqual(budget * 1.1);
    expect(totals.costUsd).toBeGreaterThan(spentFirst);
  }, 240_000);

  it("--concurrency: a resume runs at the stored concurrency (1: never two requests at once); --resume --concurrency N replaces it, stored and said once; a finished batch's resume runs nothing", async () => {
    // One at a time: a resume at the default (8) has several requests in flight at once.
    const first = await interruptAfter(batchArgs("wide", "--concurrency", "1"), 1);
    expect(first.code, first.stderr).toBe(130);

    let from = Date.now();
    const kept = await interruptAfter(["batch", "--resume", "wide"], 3);
    expect(kept.code, kept.stderr).toBe(130);
    expect(kept.stderr).not.toMatch(/replaces the setting/);
    expect(await peakInFlight(from)).toBe(1);

    from = Date.now();
    const wider = await runCli(["batch", "--resume", "wide", "--concurrency", "4"], {
      cwd: dir,
      env: sim.env,
    });
    expect(wider.code, wider.stderr).toBe(0);
    expect(wider.stderr).toContain(
      "forkloop batch wide: --concurrency 4 (was 1) replaces the setting it started with; batch.json keeps it for later resumes",
    );
    expect(await peakInFlight(from)).toBeGreaterThan(1);
    const stored = JSON.parse(await readFile(join(batchStateDir(dir, "wide"), "batch.json"), "utf8"));
    expect(stored.startFlags).toEqual({ concurrency: "4" });

    from = Date.now();
    const again = await runCli(["batch", "--resume", "wide"], { cwd: dir, env: sim.env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(
      "forkloop batch wide is finished (16 items succeeded, 0 failed): nothing to run.",
    );
    expect(again.stderr).not.toMatch(/replaces the setting/);
    expect(again.stdout).toContain("16 items: 16 succeeded, 0 failed");
    expect((await sim.requests()).filter((record) => record.startedAt >= from)).toEqual([]);
  }, 240_000);

  it("the model and the items: --resume --model replaces the model (requests use it); --prompt or --files is refused, exit 2", async () => {
    const first = await interruptAfter(
      batchArgs("model", "--concurrency", "2", "--model", "claude-sonnet-4-6"),
      1,
    );
    expect(first.code, first.stderr).toBe(130);
    const refused = await runCli(["batch", "--resume", "model", "--prompt", "other"], {
      cwd: dir,
      env: sim.env,
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      "--resume continues batch model, whose items and prompt are fixed; drop --prompt",
    );

    const from = Date.now();
    const resumed = await runCli(["batch", "--resume", "model", "--model", "claude-haiku-4-5"], {
      cwd: dir,
      env: sim.env,
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("--model claude-haiku-4-5 (was claude-sonnet-4-6) replaces the setting");
    const models = (await sim.requests())
      .filter((record) => record.path === "/v1/messages" && record.startedAt >= from)
      .map((record) => (JSON.parse(record.rawBody) as { model: string }).model);
    expect(new Set(models)).toEqual(new Set(["claude-haiku-4-5"]));
  }, 240_000);
});
