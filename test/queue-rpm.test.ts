import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectQueue, parseQueueUrl, tryAdmitRequest } from "@forkloop/batch";
import {
  type RedisServer,
  runCliInProcess,
  type SimHandle,
  startCli,
  startRedisServer,
  startSimInProcess,
  stopStarted,
  waitForOutput,
  writeTaskItems,
} from "@forkloop/cli/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

/**
 * R-B1, `--rpm N`: a request limiter shared by every `forkloop worker` through Redis
 * (request-limiter.ts). One real redis-server for the file; the workers are spawned built CLIs
 * talking to one `forkloop sim` (in this process), whose request log counts what reached "the API".
 */

let redis: RedisServer;
let dir: string;
const processes: ReturnType<typeof startCli>[] = [];
let sim: SimHandle | undefined;

beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-rpm-"));
});
afterEach(async () => {
  await stopStarted(processes);
  await sim?.stop();
  sim = undefined;
  await rm(dir, { recursive: true, force: true });
});

const writeItems = (count: number) => writeTaskItems(dir, count);

function start(args: readonly string[], env: Record<string, string> = {}) {
  const started = startCli(args, { cwd: dir, env });
  processes.push(started);
  return started;
}

const batchArgs = (id: string, extra: readonly string[] = []) => [
  "batch",
  "--items",
  "items.jsonl",
  "--prompt",
  "Answer {{item}}",
  "--queue",
  redis.url,
  "--id",
  id,
  ...extra,
];

describe("R-B1: --rpm, a queue-wide request limiter", () => {
  it("the sliding-log script on real Redis admits N requests per window, refuses the N+1st with the wait until the oldest leaves, and admits again after the window", async () => {
    const connection = await connectQueue(parseQueueUrl(redis.url));
    try {
      const limit = { redis: connection, key: "forkloop:test:requests", limit: 3, windowMs: 1_500 };
      const first = await Promise.all([
        tryAdmitRequest(limit),
        tryAdmitRequest(limit),
        tryAdmitRequest(limit),
      ]);
      expect(first).toEqual([0, 0, 0]);
      const refused = await tryAdmitRequest(limit);
      expect(refused).toBeGreaterThan(0);
      expect(refused).toBeLessThanOrEqual(1_500);
      // A refusal is not counted: the log holds the three admitted requests only.
      expect(await connection.zcard(limit.key)).toBe(3);
      await new Promise((resolve) => setTimeout(resolve, refused + 20));
      expect(await tryAdmitRequest(limit)).toBe(0);
      // The window is per key: another batch's log is untouched by this one's.
      expect(await tryAdmitRequest({ ...limit, key: "forkloop:test:other" })).toBe(0);
    } finally {
      connection.disconnect();
    }
  });

  it("two workers, --rpm 4, 10 items: the simulator sees exactly 4 requests in total (not 4 per worker), the rest wait and the workers say so", async () => {
    await writeItems(10);
    sim = await startSimInProcess(dir);
    const producer = start(batchArgs("rpm4", ["--rpm", "4"]));
    await waitForOutput(producer.child, producer.stderr, (text) =>
      text.includes("forkloop batch rpm4: 10 items"),
    );
    expect(producer.stderr()).toContain("at most 4 requests/min");
    const workers = [0, 1].map(() =>
      start(["worker", "--queue", redis.url, "--concurrency", "3"], sim?.env ?? {}),
    );
    const limited = (text: string) => text.includes("at its limit of 4 requests/min (all hosts together)");
    const settled = () => workers.map((worker) => (worker.stderr().match(/^ok /gm) ?? []).length);
    // Until both workers wait on the limit, or (a limiter that does not hold) every item is done.
    const deadline = Date.now() + 20_000;
    const waitingOrDone = () =>
      workers.every((worker) => limited(worker.stderr())) || settled().reduce((a, b) => a + b) === 10;
    while (!waitingOrDone() && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    // Give any request that slipped through time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const requests = (await sim.requests()).filter((request) => request.path === "/v1/messages");
    expect(requests, workers.map((worker) => worker.stderr()).join("\n")).toHaveLength(4);
    expect(settled().reduce((a, b) => a + b)).toBe(4);
    for (const worker of workers) expect(worker.stderr()).toSatisfy(limited);
  }, 60_000);

  it("--rpm is checked: not a positive whole number, with --resume, or another N for an enqueued batch — each exit 2 naming the fix", async () => {
    await writeItems(2);
    const zero = await runCliInProcess(batchArgs("bad", ["--rpm", "0"]), { cwd: dir });
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain("--rpm");
    expect(zero.stderr).toContain("between 1 and");
    const word = await runCliInProcess(batchArgs("bad", ["--rpm", "fast"]), { cwd: dir });
    expect(word.code).toBe(2);
    expect(word.stderr).toContain("e.g. --rpm 60");
    const resumed = await runCliInProcess(["batch", "--resume", "x", "--queue", redis.url, "--rpm", "4"], {
      cwd: dir,
    });
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain("drop it to re-attach with --resume x");

    // Enqueued with --rpm 4 (no worker runs it), enqueued again from another host's checkout
    // with --rpm 5 or none: the usual "other settings" conflict.
    const producer = start(batchArgs("keep", ["--rpm", "4"]));
    await waitForOutput(producer.child, producer.stderr, (text) =>
      text.includes("forkloop batch keep: 2 items"),
    );
    const otherHost = await mkdtemp(join(tmpdir(), "forkloop-rpm-other-"));
    try {
      await writeFile(join(otherHost, "items.jsonl"), await readFile(join(dir, "items.jsonl")));
      const faster = await runCliInProcess(batchArgs("keep", ["--rpm", "5"]), { cwd: otherHost });
      expect(faster.code).toBe(2);
      expect(faster.stderr).toContain("with other settings (rpm differ)");
      const unlimited = await runCliInProcess(batchArgs("keep"), { cwd: otherHost });
      expect(unlimited.code).toBe(2);
      expect(unlimited.stderr).toContain("(rpm differ)");
    } finally {
      await rm(otherHost, { recursive: true, force: true });
    }
  }, 60_000);
});
