import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchStateDir, runCliInProcess } from "@forkloop/cli/testing";
import { type BrainReply, type BrainRequest, startSimulator } from "@forkloop/sim";
import { livePidsWithArgument } from "@forkloop/tools/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

/**
 * R-T4: a batch item's background shell that outlives the item's last turn is stopped when the
 * item ends — the whole process tree, checked in /proc — not when the batch ends: with one item at
 * a time, the second item's first request finds the first item's command gone.
 */
const BASE = 8_000_000 + Math.floor(Math.random() * 999_000);
/** Each item's command sleeps a duration no other process has: it names that process in /proc. */
const sleepOf = (item: number) => `${BASE + item}`;
const alive = (item: number) => livePidsWithArgument(sleepOf(item)).length > 0;
/** What the brain saw in /proc: each item's command while the item ran, the first one's at the second item's start. */
const seen = { whileRunning: new Map<number, boolean>(), firstAtSecondStart: true };

/**
 * Whether the item's command shows in /proc, waiting up to 5 s: the call answers as soon as its
 * shell is spawned, and on a loaded machine `sleep` may not have replaced the shell yet.
 */
async function appears(item: number): Promise<boolean> {
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; ) {
    if (alive(item)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return alive(item);
}

async function brain(request: BrainRequest): Promise<BrainReply> {
  const item = Number(/\((\d)\)/.exec(JSON.stringify(request.body.messages[0]))?.[1] ?? 0);
  if (request.lastToolResults.length === 0) {
    if (item === 2) seen.firstAtSecondStart = alive(1);
    return {
      content: [
        {
          type: "tool_use",
          name: "Bash",
          input: { command: `sleep ${sleepOf(item)}`, run_in_background: true, description: "long build" },
        },
      ],
    };
  }
  seen.whileRunning.set(item, await appears(item));
  return { content: [{ type: "text", text: "started the build; done here" }] };
}

let dir: string;
let sim: Awaited<ReturnType<typeof startSimulator>>;
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "forkloop-batch-background-")));
  await writeFile(join(dir, "items.jsonl"), '{"n":1}\n{"n":2}\n');
  sim = await startSimulator({ brain });
});
afterEach(() => {
  for (const pid of [1, 2].flatMap((item) => livePidsWithArgument(sleepOf(item))))
    process.kill(pid, "SIGKILL");
});
afterAll(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

describe("R-T4: background shells in batch items", () => {
  it("R-T4: a batch item's background command still running at the item's end is stopped with the item, not the batch: gone from /proc before the next item starts; control: it ran while its item worked", async () => {
    const result = await runCliInProcess(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Start the build ({{item.n}})",
        "--allowed-tools",
        "Bash",
        "--sandbox",
        "off",
        "--no-isolate",
        "--concurrency",
        "1",
        "--id",
        "bg",
      ],
      { cwd: dir, env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url } },
    );
    expect(result.code, result.stderr).toBe(0);
    // Control: each command ran while its item worked.
    expect(seen.whileRunning).toEqual(
      new Map([
        [1, true],
        [2, true],
      ]),
    );
    // The first item's command was gone when the second item started, not only at the batch's end.
    expect(seen.firstAtSecondStart).toBe(false);
    expect([alive(1), alive(2)]).toEqual([false, false]);
    const rows = (await readFile(join(batchStateDir(dir, "bg"), "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { status: string; text?: string });
    expect(rows.map((row) => row.status)).toEqual(["succeeded", "succeeded"]);
  });
});
