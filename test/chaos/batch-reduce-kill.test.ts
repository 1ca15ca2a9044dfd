import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchStateDir, runCli, startCli } from "@forkloop/cli/testing";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-B7 chaos: the built CLI is kill -9'd while its reduce request is in flight (the model server
 * holds it open), after every item of the map settled. The resume — given no flag but --resume:
 * the reduce is a start setting batch.json keeps — runs the reduce alone: no item request is sent
 * again, every item keeps its first attempt, and the reduce's answer is the batch's result.
 */
const REDUCE_MARK = "The batch's items have finished";

let dir: string;
let server: Simulator;
let holdReduce = true;
const sent: { reduce: boolean }[] = [];
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "forkloop-reduce-kill-")));
  await writeFile(join(dir, "items.jsonl"), '{"n":1}\n{"n":2}\n{"n":3}\n');
  const answer = (text: string) => ({ content: [{ type: "text" as const, text }] });
  server = await startSimulator({
    brain: (request) => {
      const text = JSON.stringify(request.body.messages ?? []);
      const reduce = text.includes(REDUCE_MARK);
      sent.push({ reduce });
      if (reduce && holdReduce) return { content: [], fault: "headers_then_silence" };
      if (reduce) return answer("REDUCED: three items");
      return answer(`finding ${/\(item (\d)\)/.exec(text)?.[1] ?? "?"}`);
    },
  });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const env = () => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url });

async function waitUntil(test: () => boolean, what: string): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    if (test()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("R-B7: a batch killed during its reduce", () => {
  it("R-B7: kill -9 during the reduce; the resume runs the reduce alone, the items keep their one attempt", async () => {
    const cli = startCli(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Look at (item {{item.n}}).",
        "--reduce",
        "Sum up the findings.",
        "--id",
        "k",
      ],
      { cwd: dir, env: env() },
    );
    await waitUntil(() => sent.some((request) => request.reduce), "the reduce request");
    cli.child.kill("SIGKILL");
    const killed = await cli.exited;
    expect(killed.signal).toBe("SIGKILL");
    const state = batchStateDir(dir, "k");
    expect(JSON.parse(await readFile(join(state, "reduce.json"), "utf8"))).toMatchObject({
      status: "running",
      attempt: 1,
    });
    // `batch status` says the reduce is what is left, and how to run it.
    const status = await runCli(["batch", "status", "k"], { cwd: dir, env: env() });
    expect(status.stdout).toContain("stopped before its reduce (resume it)");
    expect(status.stdout).toContain("reduce: running over 3 items");
    expect(status.stdout).toContain("resume: forkloop batch --resume k");
    const itemsBefore = sent.filter((request) => !request.reduce).length;
    expect(itemsBefore).toBe(3);

    holdReduce = false;
    const resumed = await runCli(["batch", "--resume", "k"], { cwd: dir, env: env() });
    expect(resumed.code, resumed.stderr).toBe(0);
    // Only the reduce went out again.
    expect(sent.filter((request) => !request.reduce)).toHaveLength(itemsBefore);
    expect(sent.filter((request) => request.reduce)).toHaveLength(2);
    expect(resumed.stdout).toContain("result (reduce over 3 items");
    expect(resumed.stdout).toContain("REDUCED: three items");
    expect(JSON.parse(await readFile(join(state, "reduce.json"), "utf8"))).toMatchObject({
      status: "succeeded",
      attempt: 2,
    });
    const rows = (await readFile(join(state, "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(rows.map((row) => [row.status, row.attempts])).toEqual([
      ["succeeded", 1],
      ["succeeded", 1],
      ["succeeded", 1],
    ]);
  });
});
