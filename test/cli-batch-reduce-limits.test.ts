import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchStateDir, runCliInProcess, type SimHandle, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-B7: the reduce within the batch's limits, through the CLI and the simulator over HTTP — it is
 * counted by `--max-budget-usd` (no room left: it does not start, and a resume with a higher
 * budget runs it alone), it is in the `--dry-run` estimate, and with `--api batches` the items go
 * as Message Batches while the one reduce request goes online.
 */
const REDUCE_MARK = "The batch's items have finished";

let dir: string;
let sim: SimHandle;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-batch-reduce-limits-"));
  await writeFile(join(dir, "tasks.jsonl"), '"one"\n"two"\n"three"\n');
  await writeFile(
    join(dir, "scenario.json"),
    JSON.stringify({
      rules: [
        {
          match: { lastUserText: REDUCE_MARK },
          reply: { content: [{ type: "text", text: "SUMMARY: all reviewed." }] },
        },
        { match: {}, reply: { content: [{ type: "text", text: "Reviewed: fine." }] } },
      ],
    }),
  );
  sim = await startSimInProcess(dir, ["--scenario", "scenario.json", "--batch-processing-ms", "200"]);
});
afterAll(async () => {
  await sim.stop();
  await rm(dir, { recursive: true, force: true });
});

// Message Batches polled often, rounds closed soon: the --api batches case stays short.
const FAST = { FORKLOOP_BATCH_POLL_MS: "40", FORKLOOP_BATCH_ROUND_WAIT_MS: "1500" };
const batch = (id: string, ...extra: string[]) =>
  runCliInProcess(["batch", "--items", "tasks.jsonl", "--prompt", "Review {{item}}.", "--id", id, ...extra], {
    cwd: dir,
    env: { ...sim.env, ...FAST },
  });

const resume = (id: string, ...extra: string[]) =>
  runCliInProcess(["batch", "--resume", id, ...extra], { cwd: dir, env: { ...sim.env, ...FAST } });

async function requestsSince(count: number) {
  return (await sim.requests()).slice(count);
}
const isReduce = (record: { rawBody: string }) => record.rawBody.includes(REDUCE_MARK);

async function itemsCost(id: string): Promise<number> {
  const report = JSON.parse(await readFile(join(batchStateDir(dir, id), "report.json"), "utf8"));
  return report.totals.costUsd as number;
}

describe("R-B7: the reduce within the batch's limits", { timeout: 120_000 }, () => {
  it("R-B7: --dry-run estimates the reduce's first request beside the items'", async () => {
    const plain = await batch("d0", "--dry-run", "--output-format", "json");
    const reduced = await batch("d1", "--dry-run", "--output-format", "json", "--reduce", "Summarise.");
    expect([plain.code, reduced.code]).toEqual([0, 0]);
    const without = JSON.parse(plain.stdout);
    const withReduce = JSON.parse(reduced.stdout);
    expect(without.reduce).toBeUndefined();
    expect(withReduce.reduce.promptTokens).toBeGreaterThan(0);
    // A prefix read plus its prompt: more than nothing, less than the items' first requests.
    expect(withReduce.reduce.firstRequestCostUsd).toBeGreaterThan(0);
    expect(withReduce.reduce.firstRequestCostUsd).toBeLessThan(withReduce.firstRequestsCostUsd);
    const text = await batch("d2", "--dry-run", "--reduce", "Summarise.");
    expect(text.stdout).toMatch(/then the reduce: one request reading the prefix \+ \d+ prompt tokens/);
    const total = Number(/at least \$([\d.]+) at /.exec(text.stdout)?.[1]);
    expect(total).toBeCloseTo(withReduce.firstRequestsCostUsd + withReduce.reduce.firstRequestCostUsd, 4);
  });

  it("R-B7: --max-budget-usd counts the reduce — with no room left for it, it does not start (exit 10, the items' results kept); a resume with a higher budget runs the reduce alone", async () => {
    expect((await batch("b")).code).toBe(0);
    const spent = await itemsCost("b");
    const before = (await sim.requests()).length;
    // The items spent `spent`; the reduce is estimated at their average (a third more): no room.
    const limit = (spent * 1.2).toFixed(6);
    const stopped = await resume("b", "--reduce", "Summarise.", "--max-budget-usd", limit);
    expect(stopped.code, stopped.stderr).toBe(10);
    expect(stopped.stderr).toMatch(
      /the reduce \(about \$[\d.]+\) was not started; resume with a higher budget/,
    );
    expect(await requestsSince(before)).toHaveLength(0);

    const resumed = await resume("b", "--max-budget-usd", "100");
    expect(resumed.code, resumed.stderr).toBe(0);
    const sent = await requestsSince(before);
    expect(sent.filter(isReduce)).toHaveLength(1);
    expect(sent.filter((record) => !isReduce(record))).toHaveLength(0);
    expect(resumed.stdout).toContain("SUMMARY: all reviewed.");
  });

  it("R-B7, R-B8: with --api batches the items are Message Batch entries and the reduce is one online request on their prefix", async () => {
    const before = (await sim.requests()).length;
    const result = await batch("api", "--api", "batches", "--reduce", "Summarise.");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("SUMMARY: all reviewed.");
    const sent = await requestsSince(before);
    const online = sent.filter((record) => record.path === "/v1/messages");
    expect(online).toHaveLength(1);
    expect(isReduce(online[0]!)).toBe(true);
    // The items went as a Message Batch (its entries are recorded under the batch's path).
    expect(
      sent.filter((record) => record.path.startsWith("/v1/messages/batches/") && record.path.includes("#")),
    ).toHaveLength(3);
    expect(online[0]?.usage?.cache_read_input_tokens ?? 0).toBeGreaterThan(0);
  });
});
