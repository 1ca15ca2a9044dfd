import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Every batch item is an agent with its own context (issue 12), through the BUILT binary.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-batch-context-"));
  await mkdir(join(dir, "src"), { recursive: true });
  for (let index = 0; index < 2; index++)
    await writeFile(join(dir, "src", `m${index}.ts`), `export const m${index} = ${index};\n`);
  await writeFile(
    join(dir, "cap-4k.json"),
    JSON.stringify([{ id: "claude-sonnet-4-6", contextWindow: 200_000, maxOutputTokens: 4_000 }]),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function results(id: string) {
  const text = await readFile(join(dir, ".forkloop", "batches", id, "results.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { label: string; status: string; error: { message: string } | null });
}

describe("forkloop batch: each item's context (issue 12)", () => {
  it("issue 12 item 1: the shared prefix takes max_tokens from the model's cap (a models file with a 4,000 cap: every item succeeds)", async () => {
    // FORKLOOP_MODELS sets the client's model info and the embedded simulator's registry alike.
    const run = await runCli(
      ["batch", "--files", "src/*.ts", "--prompt", "Summarize {{file}}", "--id", "cap"],
      { cwd: dir, env: { FORKLOOP_MODELS: "cap-4k.json" } },
    );
    expect(run.code, run.stderr).toBe(0);
    expect((await results("cap")).map((line) => [line.label, line.status, line.error])).toEqual([
      ["src/m0.ts", "succeeded", null],
      ["src/m1.ts", "succeeded", null],
    ]);
  });
});
