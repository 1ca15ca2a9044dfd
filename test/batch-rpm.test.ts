import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  batchStateDir,
  runCli,
  type SimProcess,
  startCli,
  startSimProcess,
  waitForOutput,
} from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-B1, `--rpm N` for a local batch: an in-process sliding window in front of every
 * model request (request-limiter.ts `memoryRequestLimiter`). The built CLI against one `forkloop
 * sim` process, whose request log counts what reached "the API"; the batch is stopped (Ctrl+C)
 * once N requests are in and the next is known to wait, so no test waits out a minute.
 */

let dir: string;
let sim: SimProcess;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-local-rpm-"));
  const lines = Array.from({ length: 7 }, (_, index) => JSON.stringify(`task ${index + 1}`));
  await writeFile(join(dir, "items.jsonl"), `${lines.join("\n")}\n`);
  sim = await startSimProcess(dir);
});
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

const sentToSim = async () =>
  (await sim.requests()).filter((request) => request.path === "/v1/messages").length;

/** Runs the batch until it says its requests wait on the limit, checks the count, then stops it. */
async function runUntilLimited(args: readonly string[], rpm: number, expectedSent: number) {
  const batch = startCli(["batch", ...args], { cwd: dir, env: sim.env });
  try {
    await waitForOutput(batch.child, batch.stderr, (text) =>
      text.includes(`at the --rpm limit of ${rpm} requests/min: requests wait, the next in`),
    );
    // Give a request that slipped past the limit time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await sentToSim(), batch.stderr()).toBe(expectedSent);
  } finally {
    batch.child.kill("SIGINT");
  }
  const exited = await batch.exited;
  expect(exited.code, exited.stderr).toBe(130); // interrupted: resumable
  // One line for the stretch of waiting, not one per waiting item.
  expect(exited.stderr.match(/at the --rpm limit/g)).toHaveLength(1);
  return exited;
}

const storedRpm = async () =>
  JSON.parse(await readFile(join(batchStateDir(dir, "local-rpm"), "batch.json"), "utf8")).rpm as number;

describe("R-B1: --rpm N on a local batch (no --queue)", () => {
  it("lets exactly N requests through in the first minute while the next waits; batch.json keeps N; --resume keeps it, --resume --rpm M replaces and stores it", async () => {
    const first = await runUntilLimited(
      [
        "--items",
        "items.jsonl",
        "--prompt",
        "Answer {{item}}",
        "--id",
        "local-rpm",
        "--rpm",
        "4",
        "--concurrency",
        "7",
      ],
      4,
      4,
    );
    expect(first.stderr).toContain("7 items · at most 4 requests/min");
    expect(await storedRpm()).toBe(4);

    // A resume in a new process: a new window of 1 (the flag wins), so 1 more request, then waits.
    const resumed = await runUntilLimited(["--resume", "local-rpm", "--rpm", "1"], 1, 5);
    expect(resumed.stderr).toContain("at most 1 requests/min");
    expect(await storedRpm()).toBe(1);

    // Without the flag, the stored limit holds.
    const kept = await runUntilLimited(["--resume", "local-rpm"], 1, 6);
    expect(kept.stderr).toContain("at most 1 requests/min");
  }, 60_000);

  it("bad --rpm values on a local batch exit 2 naming the fix, before any request", async () => {
    const before = await sentToSim();
    for (const [value, message] of [
      ["0", "between 1 and"],
      ["2.5", "e.g. --rpm 60"],
    ] as const) {
      const bad = await runCli(
        ["batch", "--items", "items.jsonl", "--prompt", "x {{item}}", "--rpm", value],
        {
          cwd: dir,
          env: sim.env,
        },
      );
      expect(bad.code, bad.stderr).toBe(2);
      expect(bad.stderr).toContain("--rpm");
      expect(bad.stderr).toContain(message);
    }
    expect(await sentToSim()).toBe(before);
  }, 30_000);
});
