import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectQueue, parseQueueUrl } from "@forkloop/batch";
import {
  batchStateDir,
  type RedisServer,
  type RedisServerOptions,
  runCliInProcess,
  startCli,
  startRedisServer,
  stopStarted,
  waitForOutput,
  writeTaskItems,
} from "@forkloop/cli/testing";
import { parseFaultSpec, startSimulator } from "@forkloop/sim";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/**
 * R-R10 chaos: a queue that loses data says so. Each case runs a real redis-server set up the
 * way users' go wrong — no persistence, an evicting policy, out of memory, a replica, a password
 * — and the CLI against it (spawned where a worker is frozen, in this process otherwise).
 */

let dir: string;
const started: ReturnType<typeof startCli>[] = [];
const servers: RedisServer[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-queue-loss-"));
});
afterEach(async () => {
  await stopStarted(started);
  await Promise.all(servers.splice(0).map((server) => server.stop()));
  await rm(dir, { recursive: true, force: true });
});

async function redisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const server = await startRedisServer(options);
  servers.push(server);
  return server;
}

const FAST_LOCKS = ["--lock-duration", "2000", "--stalled-interval", "1000"];
const okLines = (text: string) => (text.match(/^ok /gm) ?? []).length;

function start(args: readonly string[], env: Record<string, string> = {}) {
  const child = startCli(args, { cwd: dir, env });
  started.push(child);
  return child;
}

const batchArgs = (url: string, id: string) => [
  "batch",
  "--items",
  "items.jsonl",
  "--prompt",
  "Answer {{item}}",
  "--queue",
  url,
  "--id",
  id,
];

/** No state directory was created for any batch. */
async function noBatchState(): Promise<void> {
  const batches = join(batchStateDir(dir, "x"), "..");
  expect(await readdir(batches).catch(() => [])).toEqual([]);
}

describe("R-R10 chaos: a queue that lost data says so (real redis-server)", () => {
  it("R-R10: an evicting Redis (allkeys-lru, volatile-lru) is refused by the producer and the worker: one line naming the fix, exit 2, nothing created", async () => {
    await writeTaskItems(dir, 2);
    for (const policy of ["allkeys-lru", "volatile-lru"]) {
      const redis = await redisServer({ args: ["--maxmemory-policy", policy] });
      for (const args of [batchArgs(redis.url, "evict"), ["worker", "--queue", redis.url]]) {
        const result = await runCliInProcess(args, { cwd: dir });
        expect(result.code, result.stderr).toBe(2);
        // Bad input: one line, naming the problem and the fix.
        expect(result.stderr.trimEnd().split("\n"), result.stderr).toHaveLength(1);
        expect(result.stderr).toContain(
          `Redis at ${redis.url} evicts keys when full (maxmemory-policy ${policy})`,
        );
        expect(result.stderr).toContain("CONFIG SET maxmemory-policy noeviction");
        expect(result.stderr).not.toMatch(/^\s+at /m);
      }
    }
    await noBatchState();
  }, 60_000);

  it("R-R10: a read-only replica, a missing or wrong password and an out-of-memory Redis are one line naming the fix, exit 2, no stack, nothing left behind", async () => {
    await writeTaskItems(dir, 2);
    const primary = await redisServer();
    const replica = await redisServer({ args: ["--replicaof", "127.0.0.1", String(primary.port)] });
    for (const args of [batchArgs(replica.url, "ro"), ["worker", "--queue", replica.url]]) {
      const result = await runCliInProcess(args, { cwd: dir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(
        `Redis at ${replica.url} is a read-only replica. Give --queue the primary's URL.`,
      );
    }

    const locked = await redisServer({ args: ["--requirepass", "s3cret"] });
    const noPassword = await runCliInProcess(["worker", "--queue", locked.url], { cwd: dir });
    expect(noPassword.code, noPassword.stderr).toBe(2);
    expect(noPassword.stderr).toContain("NOAUTH");
    expect(noPassword.stderr).toContain("Put the password in the URL: redis://:PASSWORD@HOST:PORT");
    const wrong = await runCliInProcess(batchArgs(`redis://:nope@127.0.0.1:${locked.port}`, "pw"), {
      cwd: dir,
    });
    expect(wrong.code, wrong.stderr).toBe(2);
    expect(wrong.stderr).toContain("WRONGPASS");

    // Out of memory: every write refused (maxmemory 1 byte, noeviction).
    const full = await redisServer();
    const admin = await connectQueue(parseQueueUrl(full.url));
    await admin.config("SET", "maxmemory", "1");
    admin.disconnect();
    const oom = await runCliInProcess(batchArgs(full.url, "oom"), { cwd: dir });
    expect(oom.code, oom.stderr).toBe(2);
    expect(oom.stderr).toContain(
      `Redis at ${full.url} is out of memory (used memory > maxmemory) and refuses writes`,
    );
    expect(oom.stderr).toContain("CONFIG SET maxmemory");
    for (const text of [noPassword.stderr, wrong.stderr, oom.stderr]) {
      expect(text).not.toContain("unexpected error");
      expect(text).not.toMatch(/^\s+at /m);
    }
    await noBatchState();
  }, 60_000);

  it("R-R10: Redis without persistence restarts empty mid-batch: both sides warned at start; the producer stops within seconds naming the loss and writes every result it had received", async () => {
    await writeTaskItems(dir, 30);
    const redis = await redisServer({ persistence: "none" });
    const worker = start(["worker", "--queue", redis.url, "--concurrency", "2", ...FAST_LOCKS], {
      FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=40",
    });
    const producer = start(batchArgs(redis.url, "empty"));
    await waitForOutput(producer.child, producer.stderr, (text) => okLines(text) >= 3);
    await redis.restart();
    const done = await producer.exited;
    expect(done.code, done.stderr).not.toBe(0);
    expect(done.code, done.stderr).not.toBe(1);
    for (const text of [done.stderr, worker.stderr()]) {
      expect(text).toContain(`warning: Redis at ${redis.url} keeps nothing on disk`);
    }
    expect(done.stderr).toContain(`batch empty is gone from Redis at ${redis.url}`);
    expect(done.stderr).toMatch(
      /was lost from Redis .* with \d+ items unfinished; the \d+ results received are in /,
    );
    expect(done.stderr).not.toMatch(/^\s+at /m);
    const shown = okLines(done.stderr);
    const results = (await readFile(join(batchStateDir(dir, "empty"), "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { status: string });
    expect(results).toHaveLength(30);
    expect(results.filter((line) => line.status === "succeeded").length).toBeGreaterThanOrEqual(shown);
    expect(results.filter((line) => line.status === "pending").length).toBeGreaterThan(0);
  }, 90_000);

  it("R-R10: after a Redis rollback (restart from an older snapshot) the re-runs are counted: the report's API calls equal the requests the simulator answered", async () => {
    await writeTaskItems(dir, 16);
    const sim = await startSimulator({ faults: parseFaultSpec("slow@1+:slow_ms=30") });
    try {
      const redis = await redisServer({ persistence: "none" });
      const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url };
      const worker = start(["worker", "--queue", redis.url, "--concurrency", "2", ...FAST_LOCKS], env);
      const producer = start(batchArgs(redis.url, "rollback"), env);
      await waitForOutput(producer.child, producer.stderr, (text) => okLines(text) >= 3);
      const admin = await connectQueue(parseQueueUrl(redis.url));
      await admin.save(); // the snapshot the restart goes back to
      admin.disconnect();
      const atSnapshot = okLines(producer.stderr());
      await waitForOutput(producer.child, producer.stderr, (text) => okLines(text) >= atSnapshot + 4);
      // Nothing settles while Redis goes back: every run settled so far was seen by the producer.
      worker.child.kill("SIGSTOP");
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await redis.restart();
      worker.child.kill("SIGCONT");
      const done = await producer.exited;
      expect(done.code, done.stderr).toBe(0);
      expect(done.stderr).toMatch(/lost \d+ recorded results? \(it restarted from an older snapshot\)/);
      const report = JSON.parse(await readFile(join(batchStateDir(dir, "rollback"), "report.json"), "utf8"));
      const calls = sim.requests().filter((record) => record.path.startsWith("/v1/messages")).length;
      expect(report.totals.usage.apiCalls).toBe(calls);
      expect(report.queue.rolledBackItems).toBeGreaterThanOrEqual(1);
      expect(report.queue.reExecutedItems).toBeGreaterThanOrEqual(report.queue.rolledBackItems);
      expect(report.items).toHaveLength(16);
    } finally {
      await sim.close();
    }
  }, 120_000);
});
