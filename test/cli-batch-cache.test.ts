import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, startSimInProcess } from "@forkloop/cli/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-cache-"));
  await writeFile(join(dir, "tasks.jsonl"), '"one"\n"two"\n"three"\n"four"\n');
  await writeFile(
    join(dir, "scenario.json"),
    JSON.stringify({ rules: [{ match: {}, reply: { content: [{ type: "text", text: "ok (scripted)" }] } }] }),
  );
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs a one-turn-per-item batch on a fresh simulator (empty cache) and returns its requests. */
async function batchRequests(extraFlags: string[]) {
  // Realistic latency: a cache entry becomes readable only once its writer's response started.
  const sim = await startSimInProcess(dir, ["--latency", "realistic", "--scenario", "scenario.json"]);
  try {
    const result = await runCliInProcess(
      ["batch", "--items", "tasks.jsonl", "--prompt", "Do {{item}}", "--concurrency", "4", ...extraFlags],
      { cwd: dir, env: sim.env },
    );
    expect(result.code, result.stderr).toBe(0);
    return (await sim.requests()).filter((record) => record.path === "/v1/messages");
  } finally {
    await sim.stop();
  }
}

describe("forkloop batch and the prompt cache", () => {
  it("R-F3/R-F4: every item sends the same cache-safe prefix; the first warms it, so 1 write + 3 reads (without warming the first wave misses)", async () => {
    const warm = await batchRequests([]);
    expect(warm).toHaveLength(4);
    const prefixes = new Set(
      warm.map((record) => {
        const body = JSON.parse(record.rawBody) as { model: string; tools: unknown; system: unknown };
        return JSON.stringify([body.model, body.tools, body.system]);
      }),
    );
    expect(prefixes.size).toBe(1);
    expect(warm.filter((record) => record.usage?.cache_read_input_tokens === 0)).toHaveLength(1);
    expect(warm.filter((record) => (record.usage?.cache_read_input_tokens ?? 0) > 0)).toHaveLength(3);

    const cold = await batchRequests(["--no-warm"]);
    expect(cold.filter((record) => record.usage?.cache_read_input_tokens === 0).length).toBeGreaterThan(1);
  });
});
