import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { batchStateDir, waitForOutput } from "@forkloop/cli/testing";
import { describe, expect, it } from "vitest";
import { useQueueCli } from "./support/queue-cli.js";

/**
 * R-B1: `forkloop batch --queue` and `forkloop worker` on a real redis-server (started here on
 * a free port in a temp dir), the cases that need processes to overlap on a clock: a worker
 * kill -9ed and one frozen past its 2 s lock, Redis restarted under a running batch, a queue-wide
 * pause of a few seconds, a worker stopped while its items run. Workers and producers are spawned
 * built CLIs with their embedded simulator (they are killed, frozen and stopped). The cases judged
 * by their end state alone are in cli-batch-queue-end-state.test.ts.
 */

const queue = useQueueCli();

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

describe("forkloop batch --queue (R-B1, BullMQ on real Redis)", () => {
  it("Done when 1 + items 3, 5: 200 items, 3 workers, one kill -9ed and one frozen past its lock, one started later: every item has exactly one result, re-executions and dropped duplicates counted, exit 0", async () => {
    await queue.writeItems(200);
    // Paced replies (each SSE event 60 ms), so items are in flight when a worker dies.
    const slow = { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=60" };
    const producer = queue.startProducer(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Answer {{item}}",
        "--queue",
        queue.redis.url,
        "--id",
        "q200",
      ],
      { cwd: queue.dir },
    );
    await waitForOutput(producer.child, producer.stderr, (text) =>
      text.includes("forkloop batch q200: 200 items"),
    );
    const killed = queue.startWorker([], slow);
    const frozen = queue.startWorker([], slow);
    queue.startWorker([], slow);
    await waitForOutput(killed.child, killed.stderr, (text) => okLines(text) >= 3);
    killed.child.kill("SIGKILL");
    // Frozen for longer than lock + stalled check: its items run again elsewhere, and when it
    // wakes its own runs finish too — those completions must be dropped, not recorded twice.
    frozen.child.kill("SIGSTOP");
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    queue.startWorker([], slow);
    frozen.child.kill("SIGCONT");
    const done = await producer.exited;
    expect(done.code, done.stderr).toBe(0);
    await queue.stopWorkers();

    const results = await queue.readResults("q200");
    expect(results).toHaveLength(200);
    expect(new Set(results.map((line) => line.id)).size).toBe(200);
    expect(results.every((line) => line.status === "succeeded")).toBe(true);
    const report = JSON.parse(await readFile(join(batchStateDir(queue.dir, "q200"), "report.json"), "utf8"));
    // The killed and the frozen worker's in-flight items ran again on another worker.
    const reRun = results.filter((line) => (line.attempts as number) > 1).length;
    expect(reRun).toBeGreaterThanOrEqual(2);
    expect(report.queue.reExecutedItems).toBe(reRun);
    expect(report.queue.duplicateExecutions).toBeGreaterThanOrEqual(1);
    expect(done.stdout).toContain(`queue: ${reRun} items ran more than once`);
    const frozenLog = (await frozen.exited).stderr;
    const dropped = (frozenLog.match(/already recorded by another run: dropped/g) ?? []).length;
    const droppedElsewhere = queue.workers
      .filter((worker) => worker !== frozen)
      .map((worker) => worker.stderr().match(/already recorded by another run: dropped/g)?.length ?? 0)
      .reduce((sum, count) => sum + count, 0);
    expect(dropped + droppedElsewhere).toBe(report.queue.duplicateExecutions);
  }, 120_000);

  it("Done when 4 + items 2, 5: Redis restarts mid-batch (one line on stderr naming the URL, one when it is back, no stack) and the producer is stopped: nothing acknowledged is lost, --resume re-attaches and finishes with one result per item", async () => {
    await queue.writeItems(30);
    const worker = queue.startWorker(["--concurrency", "4"], { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=40" });
    const args = [
      "batch",
      "--items",
      "items.jsonl",
      "--prompt",
      "Answer {{item}}",
      "--queue",
      queue.redis.url,
    ];
    const producer = queue.startProducer([...args, "--id", "restart"], { cwd: queue.dir });
    const seen = () => `producer:\n${producer.stderr()}\nworker:\n${worker.stderr()}`;
    await within(
      45_000,
      seen,
      waitForOutput(producer.child, producer.stderr, (text) => okLines(text) >= 3),
    );
    await queue.redis.restart({ downMs: 1_500 });
    await within(
      45_000,
      seen,
      waitForOutput(worker.child, worker.stderr, (text) =>
        text.includes(`redis ${queue.redis.url}: reconnected`),
      ),
    );
    producer.child.kill("SIGINT");
    const stopped = await within(45_000, seen, producer.exited);
    expect(stopped.code, seen()).toBe(130);
    expect(stopped.stderr).toContain(
      `re-attach with \`forkloop batch --resume restart --queue ${queue.redis.url}\``,
    );
    // One line per outage and connection role, not one per retry; never a raw stack trace.
    const outageLines =
      worker.stderr().match(new RegExp(`^redis ${queue.redis.url}: (?!reconnected)`, "gm")) ?? [];
    expect(outageLines.length, worker.stderr()).toBeGreaterThan(0);
    expect(outageLines.length, worker.stderr()).toBeLessThanOrEqual(2);
    for (const text of [worker.stderr(), stopped.stderr]) expect(text).not.toMatch(/^\s+at /m);
    const resuming = queue.startProducer(["batch", "--resume", "restart", "--queue", queue.redis.url], {
      cwd: queue.dir,
    });
    const resumed = await within(60_000, () => `${seen()}\nresume:\n${resuming.stderr()}`, resuming.exited);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("(re-attached");
    const results = await queue.readResults("restart");
    expect(results).toHaveLength(30);
    expect(new Set(results.map((line) => line.id)).size).toBe(30);
    expect(results.every((line) => line.status === "succeeded")).toBe(true);
  }, 150_000);

  it("item 5: a producer that stays through a Redis restart finishes the batch by itself (exit 0, one result per item)", async () => {
    await queue.writeItems(20);
    const worker = queue.startWorker(["--concurrency", "4"], { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=40" });
    const args = [
      "batch",
      "--items",
      "items.jsonl",
      "--prompt",
      "Answer {{item}}",
      "--queue",
      queue.redis.url,
    ];
    const producer = queue.startProducer([...args, "--id", "restart-stay"], { cwd: queue.dir });
    const seen = () => `producer:\n${producer.stderr()}\nworker:\n${worker.stderr()}`;
    await within(
      45_000,
      seen,
      waitForOutput(producer.child, producer.stderr, (text) => okLines(text) >= 2),
    );
    await queue.redis.restart({ downMs: 1_500 });
    const done = await within(90_000, seen, producer.exited);
    expect(done.code, seen()).toBe(0);
    expect(done.stderr).toContain(`redis ${queue.redis.url}: reconnected`);
    expect(done.stderr).not.toMatch(/^\s+at /m);
    const results = await queue.readResults("restart-stay");
    expect(new Set(results.map((line) => line.id)).size).toBe(20);
    expect(results.every((line) => line.status === "succeeded")).toBe(true);
  }, 150_000);

  it("item 4: a 429 on one worker pauses the whole queue (every host), not just that worker", async () => {
    await queue.writeItems(16);
    // Only this worker's requests are refused once (its embedded simulator's first request). Both
    // take items before the batch is enqueued, so the limited one surely gets some.
    const limited = queue.startWorker(["--concurrency", "2"], {
      FORKLOOP_SIM_FAULTS: "429@1:retry_after=4,slow@1+:slow_ms=20",
    });
    const other = queue.startWorker(["--concurrency", "2"], { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=20" });
    for (const worker of [limited, other])
      await waitForOutput(worker.child, worker.stderr, (text) => text.includes("running items from"));
    const producer = await queue.runProducer(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Answer {{item}}",
        "--queue",
        queue.redis.url,
        "--id",
        "limited",
      ],
      { cwd: queue.dir },
    );
    expect(producer.code, producer.stderr).toBe(0);
    expect(limited.stderr()).toMatch(
      /rate limited \(429 on .*\): pausing the queue for \d+ ms on every host/,
    );
    // The pause is BullMQ's queue-wide limiter, read back from Redis by the producer.
    expect(producer.stderr).toMatch(/the queue is paused for \ds on every host/);
    expect(await queue.readResults("limited")).toHaveLength(16);
  }, 60_000);

  it("item 5: SIGTERM stops a worker gracefully — it takes no more items, finishes and records the running ones, exits 0; another worker does the rest", async () => {
    await queue.writeItems(12);
    const first = queue.startWorker(["--concurrency", "3"], { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=80" });
    const producer = queue.startProducer(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Answer {{item}}",
        "--queue",
        queue.redis.url,
        "--id",
        "graceful",
      ],
      { cwd: queue.dir },
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
    queue.startWorker(["--concurrency", "3"]);
    const done = await producer.exited;
    expect(done.code, done.stderr).toBe(0);
    const results = await queue.readResults("graceful");
    expect(results).toHaveLength(12);
    // Nothing the stopped worker had started ran twice.
    expect(results.every((line) => line.attempts === 1)).toBe(true);
    expect(okLines(before) + finishedAfterStop).toBeLessThan(12);
  }, 60_000);
});
