import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const examples = join(import.meta.dirname, "..", "examples");
let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "forkloop-examples-"));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
  await rm(join(examples, ".forkloop"), { recursive: true, force: true });
});

/** Runs a built example with no API key: the embedded simulator answers (announced on stderr). */
async function example(name: string): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [join(examples, "dist", `${name}.js`)], {
    cwd: examples,
    env: { PATH: process.env.PATH ?? "", HOME: home, FORKLOOP_SIM_LATENCY: "none" },
    timeout: 120_000,
  });
}

describe("R-K1: the examples run against the embedded simulator", () => {
  it("one-shot query: reads the file and prints the answer and its cost", async () => {
    const { stdout, stderr } = await example("one-shot");
    expect(stderr).toContain("built-in simulator");
    expect(stdout).toContain("→ Read");
    expect(stdout).toMatch(/2 turns, \$\d/);
  });

  it("streaming-input chat: two turns, the second stopped by interrupt()", async () => {
    const { stdout } = await example("streaming-chat");
    expect(stdout).toContain("result 1: success (completed)");
    expect(stdout).toMatch(/result 2: error_during_execution \(aborted_(streaming|tools)\)/);
  });

  it("32 parallel queries with a custom tool, in one process", async () => {
    const { stdout } = await example("parallel-custom-tool");
    expect(stdout).toMatch(/^32\/32 succeeded/m);
  });
});
