import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchStateDir, runCliInProcess, type SimHandle, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-B7 through the CLI, the worker pool and the simulator over HTTP: `forkloop batch --reduce`
 * runs one agent after the map over the items' answers (their structured output with
 * --json-schema); its answer is the batch's result. It is a fork of the map — the same tools and
 * system prompt — so the simulator's cache accounting shows its first request reading the prefix
 * the items wrote.
 */
const REDUCE_MARK = "The batch's items have finished";

let dir: string;
let sim: SimHandle;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-batch-reduce-"));
  await writeFile(join(dir, "tasks.jsonl"), '"one"\n"two"\n"three"\n');
  const itemRule = (name: string, text: string) => ({
    match: { lastUserText: `Review ${name}.` },
    reply: { content: [{ type: "text", text }] },
  });
  await writeFile(
    join(dir, "scenario.json"),
    JSON.stringify({
      rules: [
        {
          match: { lastUserText: REDUCE_MARK },
          reply: { content: [{ type: "text", text: "SUMMARY: one, two and three were reviewed." }] },
        },
        itemRule("one", '{"finding":"finding-one"}'),
        itemRule("two", '{"finding":"finding-two"}'),
        itemRule("three", '{"finding":"finding-three"}'),
      ],
    }),
  );
  await writeFile(
    join(dir, "schema.json"),
    JSON.stringify({
      type: "object",
      properties: { finding: { type: "string" } },
      required: ["finding"],
      additionalProperties: false,
    }),
  );
  sim = await startSimInProcess(dir, ["--scenario", "scenario.json"]);
});
afterAll(async () => {
  await sim.stop();
  await rm(dir, { recursive: true, force: true });
});

type Body = { model: string; tools: unknown; system: unknown; messages: unknown[] };
const bodyOf = (record: { rawBody: string }) => JSON.parse(record.rawBody) as Body;
const isReduce = (record: { rawBody: string }) =>
  JSON.stringify(bodyOf(record).messages).includes(REDUCE_MARK);
const prefixOf = (record: { rawBody: string }) => {
  const body = bodyOf(record);
  return JSON.stringify([body.model, body.tools, body.system]);
};

async function messagesSince(count: number) {
  return (await sim.requests()).filter((record) => record.path === "/v1/messages").slice(count);
}

const batch = (id: string, ...extra: string[]) =>
  runCliInProcess(["batch", "--items", "tasks.jsonl", "--prompt", "Review {{item}}.", "--id", id, ...extra], {
    cwd: dir,
    env: sim.env,
  });

describe("R-B7: forkloop batch --reduce", () => {
  it("R-B7: after the map one agent reads every item's answer; it reads the map's prefix from the cache; its answer is printed, saved, shown by status and kept on resume", async () => {
    const before = (await messagesSince(0)).length;
    const result = await batch("r", "--reduce", "Summarise the findings.", "--concurrency", "1");
    expect(result.code, result.stderr).toBe(0);
    const requests = await messagesSince(before);
    const reduces = requests.filter(isReduce);
    const items = requests.filter((record) => !isReduce(record));
    expect(items).toHaveLength(3);
    expect(reduces).toHaveLength(1);
    const reduce = reduces[0]!;
    // It runs after every item, over every item's answer, with the prompt last.
    expect(reduce.startedAt).toBeGreaterThanOrEqual(Math.max(...items.map((record) => record.endedAt ?? 0)));
    const asked = JSON.stringify(bodyOf(reduce).messages);
    for (const finding of ["finding-one", "finding-two", "finding-three", "Summarise the findings."])
      expect(asked).toContain(finding);
    // A fork of the map: the same model, tools and system prompt, read from the cache.
    expect(new Set([...items, reduce].map(prefixOf)).size).toBe(1);
    expect(reduce.usage?.cache_read_input_tokens ?? 0).toBeGreaterThan(0);

    // The batch's result: printed first, in reduce.json and report.json, and in `batch status`.
    expect(result.stdout).toMatch(/^result \(reduce over 3 items, \$[\d.]+\):\nSUMMARY: one, two and three/);
    const state = batchStateDir(dir, "r");
    const record = JSON.parse(await readFile(join(state, "reduce.json"), "utf8"));
    expect(record).toMatchObject({
      status: "succeeded",
      attempt: 1,
      items: 3,
      prompt: "Summarise the findings.",
    });
    const report = JSON.parse(await readFile(join(state, "report.json"), "utf8"));
    expect(report.reduce).toMatchObject({
      status: "succeeded",
      text: "SUMMARY: one, two and three were reviewed.",
    });
    expect(report.reduce.usage.cacheReadInputTokens).toBeGreaterThan(0);
    // The reduce's spend counts in the batch's totals beside the items' (R-B7).
    const itemsCost = report.items.reduce((sum: number, line: { costUsd: number }) => sum + line.costUsd, 0);
    expect(report.reduce.costUsd).toBeGreaterThan(0);
    expect(report.totals.costUsd).toBeCloseTo(itemsCost + report.reduce.costUsd, 10);
    expect(report.totals.turns).toBe(3 + report.reduce.turns);
    expect(await readFile(join(state, "report.md"), "utf8")).toContain(
      "## Result (reduce: succeeded, over 3 items)",
    );
    const status = await runCliInProcess(["batch", "status", "r"], { cwd: dir, env: sim.env });
    expect(status.stdout).toContain("reduce: succeeded over 3 items");
    expect(status.stdout).toContain("SUMMARY: one, two and three were reviewed.");
    // `batch status` and `batch list` count it too: its turns beside the items', the whole cost.
    expect(status.stdout).toContain(`${report.totals.turns} turns ·`);
    const statusJson = await runCliInProcess(["batch", "status", "r", "--output-format", "json"], {
      cwd: dir,
      env: sim.env,
    });
    expect(JSON.parse(statusJson.stdout).totals.costUsd).toBe(report.totals.costUsd);
    const list = await runCliInProcess(["batch", "list"], { cwd: dir, env: sim.env });
    expect(list.stdout).toContain(`$${report.totals.costUsd.toFixed(4)}`);

    // A resume of the finished batch keeps the answer (the setting is kept, nothing is sent) …
    const count = (await messagesSince(0)).length;
    const again = await runCliInProcess(["batch", "--resume", "r"], { cwd: dir, env: sim.env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("SUMMARY: one, two and three were reviewed.");
    expect(await messagesSince(count)).toHaveLength(0);
    // … and one given another reduce prompt runs the reduce alone, again.
    const other = await runCliInProcess(["batch", "--resume", "r", "--reduce", "List the findings."], {
      cwd: dir,
      env: sim.env,
    });
    expect(other.code, other.stderr).toBe(0);
    const rerun = await messagesSince(count);
    expect(rerun).toHaveLength(1);
    expect(isReduce(rerun[0]!)).toBe(true);
    expect(JSON.parse(await readFile(join(state, "reduce.json"), "utf8"))).toMatchObject({
      attempt: 2,
      prompt: "List the findings.",
    });
    // Five CLI runs: about 4 s on an idle machine; the limit is for a shared, loaded one.
  }, 60_000);

  it("R-B7, R-B6: with --json-schema the reduce reads the items' structured outputs and answers in prose (no output format of its own)", async () => {
    const before = (await messagesSince(0)).length;
    const result = await batch("rs", "--json-schema", "schema.json", "--reduce", "Summarise the findings.");
    expect(result.code, result.stderr).toBe(0);
    const requests = await messagesSince(before);
    const reduce = requests.find(isReduce)!;
    const body = JSON.parse(reduce.rawBody) as { output_config?: { format?: unknown }; messages: unknown[] };
    expect(body.output_config?.format).toBeUndefined();
    expect(JSON.stringify(body.messages)).toContain(JSON.stringify('{"finding":"finding-two"}').slice(1, -1));
    expect(result.stdout).toContain("SUMMARY: one, two and three were reviewed.");
  });

  it("bad input: an empty --reduce is exit 2 naming the fix; nothing runs", async () => {
    const before = (await messagesSince(0)).length;
    const empty = await batch("bad1", "--reduce", " ");
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--reduce "Summarise the findings"');
    expect(await messagesSince(before)).toHaveLength(0);
  });
});
