import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  batchStateDir,
  type CliOptions,
  type RedisServer,
  runCliInProcess,
  type StartedCli,
  startCli,
  startRedisServer,
  startTracked,
  stopStarted,
  waitForOutput,
  writeTaskItems,
} from "@forkloop/cli/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

/**
 * R-B1: `forkloop batch --queue` and `forkloop worker` on a real redis-server (started here on
 * a free port in a temp dir). Workers and producers are spawned built CLIs with their embedded
 * simulator (they are killed, frozen and stopped); the one-shot commands that are refused before
 * they reach Redis, and batch list / status / report, run in this process (`runCliInProcess`).
 */

let redis: RedisServer;
let dir: string;
const workers: ReturnType<typeof startCli>[] = [];

/**
 * The producers and one-shot commands this file spawns, stopped after each test as the workers
 * are: one left waiting on the queue by a test that timed out ran on for an hour.
 */
const producers: StartedCli[] = [];
const startProducer = (args: readonly string[], options: CliOptions) =>
  startTracked(producers, args, options);
const runProducer = (args: readonly string[], options: CliOptions) => startProducer(args, options).exited;

beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-queue-"));
});
afterEach(async () => {
  await stopStarted(workers);
  await stopStarted(producers);
  await rm(dir, { recursive: true, force: true });
});

const writeItems = (count: number) => writeTaskItems(dir, count);

/** Short locks so a killed worker's items come back within seconds (the defaults are 30 s). */
const FAST_LOCKS = ["--lock-duration", "2000", "--stalled-interval", "1000"];

function startWorker(extra: readonly string[] = [], env: Record<string, string> = {}) {
  const worker = startCli(["worker", "--queue", redis.url, "--concurrency", "6", ...FAST_LOCKS, ...extra], {
    cwd: dir,
    env,
  });
  workers.push(worker);
  return worker;
}

/** Fails with what the processes printed, instead of a bare test timeout, if `promise` hangs. */
async function within<T>(ms: number, printed: () => string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms; printed:\n${printed()}`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const okLines = (text: string) => (text.match(/^ok /gm) ?? []).length;

async function readResults(batchId: string, root = dir): Promise<Record<string, unknown>[]> {
  const text = await readFile(join(batchStateDir(root, batchId), "results.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function stopWorkers(): Promise<void> {
  for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill("SIGTERM");
  await Promise.all(workers.map((worker) => worker.exited));
}

describe("forkloop batch --queue (R-B1, BullMQ on real Redis)", () => {
  it("Done when 1 + items 3, 5: 200 items, 3 workers, one kill -9ed and one frozen past its lock, one started later: every item has exactly one result, re-executions and dropped duplicates counted, exit 0", async () => {
    await writeItems(200);
    // Paced replies (each SSE event 60 ms), so items are in flight when a worker dies.
    const slow = { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=60" };
    const producer = startProducer(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Answer {{item}}",
        "--queue",
        redis.url,
        "--id",
        "q200",
      ],
      { cwd: dir },
    );
    await waitForOutput(producer.child, producer.stderr, (text) =>
      text.includes("forkloop batch q200: 200 items"),
    );
    const killed = startWorker([], slow);
    const frozen = startWorker([], slow);
    startWorker([], slow);
    await waitForOutput(killed.child, killed.stderr, (text) => okLines(text) >= 3);
    killed.child.kill("SIGKILL");
    // Frozen for longer than lock + stalled check: its items run again elsewhere, and when it
    // wakes its own runs finish too — those completions must be dropped, not recorded twice.
    frozen.child.kill("SIGSTOP");
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    startWorker([], slow);
    frozen.child.kill("SIGCONT");
    const done = await producer.exited;
    expect(done.code, done.stderr).toBe(0);
    await stopWorkers();

    const results = await readResults("q200");
    expect(results).toHaveLength(200);
    expect(new Set(results.map((line) => line.id)).size).toBe(200);
    expect(results.every((line) => line.status === "succeeded")).toBe(true);
    const report = JSON.parse(await readFile(join(batchStateDir(dir, "q200"), "report.json"), "utf8"));
    // The killed and the frozen worker's in-flight items ran again on another worker.
    const reRun = results.filter((line) => (line.attempts as number) > 1).length;
    expect(reRun).toBeGreaterThanOrEqual(2);
    expect(report.queue.reExecutedItems).toBe(reRun);
    expect(report.queue.duplicateExecutions).toBeGreaterThanOrEqual(1);
    expect(done.stdout).toContain(`queue: ${reRun} items ran more than once`);
    const frozenLog = (await frozen.exited).stderr;
    const dropped = (frozenLog.match(/already recorded by another run: dropped/g) ?? []).length;
    const droppedElsewhere = workers
      .filter((worker) => worker !== frozen)
      .map((worker) => worker.stderr().match(/already recorded by another run: dropped/g)?.length ?? 0)
      .reduce((sum, count) => sum + count, 0);
    expect(dropped + droppedElsewhere).toBe(report.queue.duplicateExecutions);
  }, 120_000);

  it("Done when 2: the same batch gives the same results file with the local backend and with BullMQ (modulo timing)", async () => {
    await writeItems(12);
    const args = ["batch", "--items", "items.jsonl", "--prompt", "Answer {{item}}", "--concurrency", "4"];
    const local = await runProducer([...args, "--id", "same-local"], { cwd: dir });
    expect(local.code, local.stderr).toBe(0);
    startWorker(["--concurrency", "4"]);
    const queued = await runProducer(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Answer {{item}}",
        "--queue",
        redis.url,
        "--id",
        "same-queued",
      ],
      { cwd: dir },
    );
    expect(queued.code, queued.stderr).toBe(0);
    // Modulo timing and the transcript: a local item's is in the batch's directory, a queued
    // item's on the host whose worker ran it (the producer's report names none).
    const withoutTiming = (lines: Record<string, unknown>[]) =>
      lines.map(({ durationMs: _duration, transcript: _transcript, ...rest }) => rest);
    const localResults = await readResults("same-local");
    const localLines = withoutTiming(localResults);
    expect(localLines).toHaveLength(12);
    const queuedLines = await readResults("same-queued");
    expect(withoutTiming(queuedLines)).toEqual(localLines);
    expect(
      localResults.every((line) => String(line.transcript).startsWith(batchStateDir(dir, "same-local"))),
    ).toBe(true);
    expect(queuedLines.every((line) => line.transcript === null)).toBe(true);
  }, 60_000);

  it("Done when 4 + items 2, 5: Redis restarts mid-batch (one line on stderr naming the URL, one when it is back, no stack) and the producer is stopped: nothing acknowledged is lost, --resume re-attaches and finishes with one result per item", async () => {
    await writeItems(30);
    const worker = startWorker(["--concurrency", "4"], { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=40" });
    const args = ["batch", "--items", "items.jsonl", "--prompt", "Answer {{item}}", "--queue", redis.url];
    const producer = startProducer([...args, "--id", "restart"], { cwd: dir });
    const seen = () => `producer:\n${producer.stderr()}\nworker:\n${worker.stderr()}`;
    await within(
      45_000,
      seen,
      waitForOutput(producer.child, producer.stderr, (text) => okLines(text) >= 3),
    );
    await redis.restart({ downMs: 1_500 });
    await within(
      45_000,
      seen,
      waitForOutput(worker.child, worker.stderr, (text) => text.includes(`redis ${redis.url}: reconnected`)),
    );
    producer.child.kill("SIGINT");
    const stopped = await within(45_000, seen, producer.exited);
    expect(stopped.code, seen()).toBe(130);
    expect(stopped.stderr).toContain(
      `re-attach with \`forkloop batch --resume restart --queue ${redis.url}\``,
    );
    // One line per outage and connection role, not one per retry; never a raw stack trace.
    const outageLines = worker.stderr().match(new RegExp(`^redis ${redis.url}: (?!reconnected)`, "gm")) ?? [];
    expect(outageLines.length, worker.stderr()).toBeGreaterThan(0);
    expect(outageLines.length, worker.stderr()).toBeLessThanOrEqual(2);
    for (const text of [worker.stderr(), stopped.stderr]) expect(text).not.toMatch(/^\s+at /m);
    const resuming = startProducer(["batch", "--resume", "restart", "--queue", redis.url], { cwd: dir });
    const resumed = await within(60_000, () => `${seen()}\nresume:\n${resuming.stderr()}`, resuming.exited);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("(re-attached");
    const results = await readResults("restart");
    expect(results).toHaveLength(30);
    expect(new Set(results.map((line) => line.id)).size).toBe(30);
    expect(results.every((line) => line.status === "succeeded")).toBe(true);
  }, 150_000);

  it("item 5: a producer that stays through a Redis restart finishes the batch by itself (exit 0, one result per item)", async () => {
    await writeItems(20);
    const worker = startWorker(["--concurrency", "4"], { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=40" });
    const args = ["batch", "--items", "items.jsonl", "--prompt", "Answer {{item}}", "--queue", redis.url];
    const producer = startProducer([...args, "--id", "restart-stay"], { cwd: dir });
    const seen = () => `producer:\n${producer.stderr()}\nworker:\n${worker.stderr()}`;
    await within(
      45_000,
      seen,
      waitForOutput(producer.child, producer.stderr, (text) => okLines(text) >= 2),
    );
    await redis.restart({ downMs: 1_500 });
    const done = await within(90_000, seen, producer.exited);
    expect(done.code, seen()).toBe(0);
    expect(done.stderr).toContain(`redis ${redis.url}: reconnected`);
    expect(done.stderr).not.toMatch(/^\s+at /m);
    const results = await readResults("restart-stay");
    expect(new Set(results.map((line) => line.id)).size).toBe(20);
    expect(results.every((line) => line.status === "succeeded")).toBe(true);
  }, 150_000);

  it("Done when 4: a bad --queue URL and an unreachable Redis are clear errors (exit 2) that leave no state behind", async () => {
    await writeItems(2);
    const batch = ["batch", "--items", "items.jsonl", "--prompt", "Answer {{item}}"];
    const notRedis = await runCliInProcess([...batch, "--queue", "http://127.0.0.1:6379"], { cwd: dir });
    expect(notRedis.code).toBe(2);
    expect(notRedis.stderr).toContain("is not a Redis URL (http:); give redis://HOST:PORT[/DB]");
    const badDb = await runCliInProcess([...batch, "--queue", "redis://127.0.0.1:6379/jobs"], { cwd: dir });
    expect(badDb.code).toBe(2);
    expect(badDb.stderr).toContain('the database "jobs" is not a number');
    const down = await startRedisServer();
    const downUrl = down.url;
    await down.stop();
    for (const args of [
      [...batch, "--queue", downUrl],
      ["worker", "--queue", downUrl],
    ]) {
      const result = await runProducer(args, { cwd: dir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`cannot reach Redis at ${downUrl}`);
    }
    const noQueue = await runCliInProcess(["worker"], { cwd: dir });
    expect(noQueue.code).toBe(2);
    expect(noQueue.stderr).toContain("--queue is required");
    const misplaced = await runCliInProcess([...batch, "--queue", redis.url, "--concurrency", "4"], {
      cwd: dir,
    });
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain("give a worker --concurrency N instead");
    // Nothing was created for any of them.
    await expect(readFile(join(batchStateDir(dir, "x"), "batch.json"))).rejects.toThrow();
    expect(await readdir(dirname(batchStateDir(dir, "x"))).catch(() => [])).toEqual([]);
  }, 60_000);

  it("Done when 4 + item 2: a batch id that exists on the queue with other settings is refused from another host; --resume there re-attaches and writes its results", async () => {
    await writeItems(4);
    startWorker(["--concurrency", "4"]);
    const args = ["batch", "--items", "items.jsonl", "--queue", redis.url, "--id", "shared"];
    const first = await runProducer([...args, "--prompt", "Answer {{item}}"], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    // "Another host": another directory with the same items file.
    const other = await mkdtemp(join(tmpdir(), "forkloop-queue-host-"));
    try {
      await writeFile(join(other, "items.jsonl"), await readFile(join(dir, "items.jsonl")));
      const conflicting = await runProducer([...args, "--prompt", "Summarize {{item}}"], { cwd: other });
      expect(conflicting.code).toBe(2);
      expect(conflicting.stderr).toContain(
        `batch shared already exists on ${redis.url} with other settings (prompt differ)`,
      );
      expect(conflicting.stderr).toContain(`forkloop batch --resume shared --queue ${redis.url}`);
      const attached = await runProducer(["batch", "--resume", "shared", "--queue", redis.url], {
        cwd: other,
      });
      expect(attached.code, attached.stderr).toBe(0);
      expect(await readResults("shared", other)).toEqual(await readResults("shared"));
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  }, 60_000);

  it("with --queue: --dry-run answers without Redis and --max-budget-usd is refused naming the fix; --state-dir, --output-format json, batch list / status and --resume --output work; a local --resume of it is refused", async () => {
    await writeItems(3);
    const batch = ["batch", "--items", "items.jsonl", "--prompt", "Answer {{item}}"];
    const down = await startRedisServer();
    const downUrl = down.url;
    await down.stop();
    const dry = await runCliInProcess(
      [...batch, "--queue", downUrl, "--dry-run", "--output-format", "json"],
      {
        cwd: dir,
      },
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ type: "batch_dry_run", items: expect.any(Array) });
    expect(JSON.parse(dry.stdout).items).toHaveLength(3);
    const budget = await runCliInProcess([...batch, "--queue", redis.url, "--max-budget-usd", "1"], {
      cwd: dir,
    });
    expect(budget.code).toBe(2);
    expect(budget.stderr).toContain("--max-budget-usd needs a local batch");
    expect(budget.stderr).toContain("Drop --queue to cap the spend");
    const html = await runCliInProcess([...batch, "--queue", redis.url, "--report"], { cwd: dir });
    expect(html.code).toBe(2);
    expect(html.stderr).toContain("--report needs a local batch");

    startWorker(["--concurrency", "3", "--state-dir", "worker-state"]);
    const state = join(dir, "state");
    const done = await runProducer(
      [...batch, "--queue", redis.url, "--id", "qj", "--state-dir", state, "--output-format", "json"],
      { cwd: dir },
    );
    expect(done.code, done.stderr).toBe(0);
    const summary = JSON.parse(done.stdout);
    expect(summary).toMatchObject({
      type: "batch_result",
      status: "succeeded",
      batchId: "qj",
      queue: { url: redis.url },
      totals: { succeeded: 3 },
      paths: { results: join(state, "batches", "qj", "results.jsonl") },
    });
    expect(summary.items).toHaveLength(3);
    // The worker keeps its transcripts in its own state directory.
    const transcripts = await readdir(join(dir, "worker-state", "batches", "qj", "transcripts"));
    expect(transcripts.filter((name) => name.endsWith(".fltr"))).toHaveLength(3);

    const list = await runCliInProcess(["batch", "list", "--state-dir", state], { cwd: dir });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^qj .*3\/3 succeeded, 0 failed, 0 pending .*finished/m);
    const status = await runCliInProcess(["batch", "status", "qj", "--state-dir", state], { cwd: dir });
    expect(status.stdout).toContain(`attach: forkloop batch --resume qj --queue ${redis.url}`);
    // No HTML page listing no items: the queued batch's report is refused, naming its results.
    const page = await runCliInProcess(["report", "qj", "--state-dir", state], { cwd: dir });
    expect(page.code).toBe(2);
    expect(page.stderr).toContain(`batch qj ran on the queue ${redis.url}`);
    expect(page.stderr).toContain(join(state, "batches", "qj", "results.jsonl"));
    const local = await runCliInProcess(["batch", "--resume", "qj", "--state-dir", state], { cwd: dir });
    expect(local.code).toBe(2);
    expect(local.stderr).toContain(
      `batch qj runs on the queue ${redis.url}; re-attach with \`forkloop batch --resume qj --queue ${redis.url}\``,
    );
    const out = join(dir, "elsewhere");
    const attached = await runProducer(
      ["batch", "--resume", "qj", "--queue", redis.url, "--state-dir", state, "--output", out],
      { cwd: dir },
    );
    expect(attached.code, attached.stderr).toBe(0);
    expect((await readFile(join(out, "results.jsonl"), "utf8")).trim().split("\n")).toHaveLength(3);
  }, 60_000);

  it("item 4: a 429 on one worker pauses the whole queue (every host), not just that worker", async () => {
    await writeItems(16);
    // Only this worker's requests are refused once (its embedded simulator's first request). Both
    // take items before the batch is enqueued, so the limited one surely gets some.
    const limited = startWorker(["--concurrency", "2"], {
      FORKLOOP_SIM_FAULTS: "429@1:retry_after=4,slow@1+:slow_ms=20",
    });
    const other = startWorker(["--concurrency", "2"], { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=20" });
    for (const worker of [limited, other])
      await waitForOutput(worker.child, worker.stderr, (text) => text.includes("running items from"));
    const producer = await runProducer(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Answer {{item}}",
        "--queue",
        redis.url,
        "--id",
        "limited",
      ],
      { cwd: dir },
    );
    expect(producer.code, producer.stderr).toBe(0);
    expect(limited.stderr()).toMatch(
      /rate limited \(429 on .*\): pausing the queue for \d+ ms on every host/,
    );
    // The pause is BullMQ's queue-wide limiter, read back from Redis by the producer.
    expect(producer.stderr).toMatch(/the queue is paused for \ds on every host/);
    expect(await readResults("limited")).toHaveLength(16);
  }, 60_000);

  it("item 5: SIGTERM stops a worker gracefully — it takes no more items, finishes and records the running ones, exits 0; another worker does the rest", async () => {
    await writeItems(12);
    const first = startWorker(["--concurrency", "3"], { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=80" });
    const producer = startProducer(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Answer {{item}}",
        "--queue",
        redis.url,
        "--id",
        "graceful",
      ],
      { cwd: dir },
    );
    await waitForOutput(first.child, first.stderr, (text) => okLines(text) >= 1);
    first.child.kill("SIGTERM");
    const stopped = await first.exited;
    expect(stopped.code, stopped.stderr).toBe(0);
    const [before = "", after = ""] = stopped.stderr.split(/stopping: taking no more items, /);
    // It was running items when told to stop, and finished them before exiting.
    expect(Number(/^finishing (\d+) running item/.exec(after)?.[1])).toBeGreaterThanOrEqual(1);
    const finishedAfterStop = okLines(after);
    expect(finishedAfterStop).toBeGreaterThanOrEqual(1);
    expect(after).toContain("stopped: every item this worker started is finished and recorded");
    startWorker(["--concurrency", "3"]);
    const done = await producer.exited;
    expect(done.code, done.stderr).toBe(0);
    const results = await readResults("graceful");
    expect(results).toHaveLength(12);
    // Nothing the stopped worker had started ran twice.
    expect(results.every((line) => line.attempts === 1)).toBe(true);
    expect(okLines(before) + finishedAfterStop).toBeLessThan(12);
  }, 60_000);

  it("item 5: a failed item is retried with backoff up to --attempts; on its last attempt the failure is its result (exit 6)", async () => {
    await writeItems(3);
    const run = (id: string, attempts: string) =>
      runProducer(
        [
          "batch",
          "--items",
          "items.jsonl",
          "--prompt",
          "Answer {{item}}",
          "--queue",
          redis.url,
          "--id",
          id,
          "--attempts",
          attempts,
          "--retry-delay",
          "200",
        ],
        { cwd: dir },
      );
    // The worker's first model request is refused (400, not retryable by the client): one item fails once.
    const retrying = startWorker(["--concurrency", "1"], { FORKLOOP_SIM_FAULTS: "400@1" });
    const retried = await run("retried", "2");
    expect(retried.code, retried.stderr).toBe(0);
    expect(retrying.stderr()).toMatch(/^retry {2}retried \S*items\.jsonl:1: invalid_request_error/m);
    expect(retrying.stderr()).toMatch(/^ok {5}retried \S*items\.jsonl:1 \(attempt 2\)$/m);
    const lines = await readResults("retried");
    expect(lines.map((line) => line.attempts).sort()).toEqual([1, 1, 2]);
    retrying.child.kill("SIGTERM");
    await retrying.exited;

    startWorker(["--concurrency", "1"], { FORKLOOP_SIM_FAULTS: "400@1" });
    const failed = await run("failed-once", "1");
    expect(failed.code, failed.stderr).toBe(6);
    const failures = (await readResults("failed-once")).filter((line) => line.status === "failed");
    expect(failures).toHaveLength(1);
    expect(failures[0]?.attempts).toBe(1);
    expect(failures[0]?.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  }, 60_000);
});
