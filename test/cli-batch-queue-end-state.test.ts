import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { batchStateDir, runCliInProcess, startRedisServer } from "@forkloop/cli/testing";
import { describe, expect, it } from "vitest";
import { useQueueCli } from "./support/queue-cli.js";

/**
 * R-B1: `forkloop batch --queue` and `forkloop worker` on a real redis-server (started here on
 * a free port in a temp dir), the cases judged by their end state alone — the same results as a
 * local batch, refusals and the state they leave, a conflicting id from another host, the JSON
 * summary and batch list / status, retries up to --attempts — so they run beside other files
 * (vitest.config.ts's PAIRED). Workers and producers are spawned built CLIs with their embedded
 * simulator; the one-shot commands refused before they reach Redis, and batch list / status /
 * report, run in this process (`runCliInProcess`). The cases on a clock (kills, a frozen worker,
 * Redis restarts, the queue-wide pause, a graceful stop) are in cli-batch-queue.test.ts.
 */

const queue = useQueueCli();

describe("forkloop batch --queue, judged by the end state (R-B1, BullMQ on real Redis)", () => {
  it("Done when 2: the same batch gives the same results file with the local backend and with BullMQ (modulo timing)", async () => {
    await queue.writeItems(12);
    const args = ["batch", "--items", "items.jsonl", "--prompt", "Answer {{item}}", "--concurrency", "4"];
    const local = await queue.runProducer([...args, "--id", "same-local"], { cwd: queue.dir });
    expect(local.code, local.stderr).toBe(0);
    queue.startWorker(["--concurrency", "4"]);
    const queued = await queue.runProducer(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Answer {{item}}",
        "--queue",
        queue.redis.url,
        "--id",
        "same-queued",
      ],
      { cwd: queue.dir },
    );
    expect(queued.code, queued.stderr).toBe(0);
    // Modulo timing and the transcript: a local item's is in the batch's directory, a queued
    // item's on the host whose worker ran it (the producer's report names none).
    const withoutTiming = (lines: Record<string, unknown>[]) =>
      lines.map(({ durationMs: _duration, transcript: _transcript, ...rest }) => rest);
    const localResults = await queue.readResults("same-local");
    const localLines = withoutTiming(localResults);
    expect(localLines).toHaveLength(12);
    const queuedLines = await queue.readResults("same-queued");
    expect(withoutTiming(queuedLines)).toEqual(localLines);
    expect(
      localResults.every((line) =>
        String(line.transcript).startsWith(batchStateDir(queue.dir, "same-local")),
      ),
    ).toBe(true);
    expect(queuedLines.every((line) => line.transcript === null)).toBe(true);
  }, 60_000);

  it("Done when 4: a bad --queue URL and an unreachable Redis are clear errors (exit 2) that leave no state behind", async () => {
    await queue.writeItems(2);
    const batch = ["batch", "--items", "items.jsonl", "--prompt", "Answer {{item}}"];
    const notRedis = await runCliInProcess([...batch, "--queue", "http://127.0.0.1:6379"], {
      cwd: queue.dir,
    });
    expect(notRedis.code).toBe(2);
    expect(notRedis.stderr).toContain("is not a Redis URL (http:); give redis://HOST:PORT[/DB]");
    const badDb = await runCliInProcess([...batch, "--queue", "redis://127.0.0.1:6379/jobs"], {
      cwd: queue.dir,
    });
    expect(badDb.code).toBe(2);
    expect(badDb.stderr).toContain('the database "jobs" is not a number');
    const down = await startRedisServer();
    const downUrl = down.url;
    await down.stop();
    for (const args of [
      [...batch, "--queue", downUrl],
      ["worker", "--queue", downUrl],
    ]) {
      const result = await queue.runProducer(args, { cwd: queue.dir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`cannot reach Redis at ${downUrl}`);
    }
    const noQueue = await runCliInProcess(["worker"], { cwd: queue.dir });
    expect(noQueue.code).toBe(2);
    expect(noQueue.stderr).toContain("--queue is required");
    const misplaced = await runCliInProcess([...batch, "--queue", queue.redis.url, "--concurrency", "4"], {
      cwd: queue.dir,
    });
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain("give a worker --concurrency N instead");
    // Nothing was created for any of them.
    await expect(readFile(join(batchStateDir(queue.dir, "x"), "batch.json"))).rejects.toThrow();
    expect(await readdir(dirname(batchStateDir(queue.dir, "x"))).catch(() => [])).toEqual([]);
  }, 60_000);

  it("Done when 4 + item 2: a batch id that exists on the queue with other settings is refused from another host; --resume there re-attaches and writes its results", async () => {
    await queue.writeItems(4);
    queue.startWorker(["--concurrency", "4"]);
    const args = ["batch", "--items", "items.jsonl", "--queue", queue.redis.url, "--id", "shared"];
    const first = await queue.runProducer([...args, "--prompt", "Answer {{item}}"], { cwd: queue.dir });
    expect(first.code, first.stderr).toBe(0);
    // "Another host": another directory with the same items file.
    const other = await mkdtemp(join(tmpdir(), "forkloop-queue-host-"));
    try {
      await writeFile(join(other, "items.jsonl"), await readFile(join(queue.dir, "items.jsonl")));
      const conflicting = await queue.runProducer([...args, "--prompt", "Summarize {{item}}"], {
        cwd: other,
      });
      expect(conflicting.code).toBe(2);
      expect(conflicting.stderr).toContain(
        `batch shared already exists on ${queue.redis.url} with other settings (prompt differ)`,
      );
      expect(conflicting.stderr).toContain(`forkloop batch --resume shared --queue ${queue.redis.url}`);
      const attached = await queue.runProducer(["batch", "--resume", "shared", "--queue", queue.redis.url], {
        cwd: other,
      });
      expect(attached.code, attached.stderr).toBe(0);
      expect(await queue.readResults("shared", other)).toEqual(await queue.readResults("shared"));
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  }, 60_000);

  it("with --queue: --dry-run answers without Redis and --max-budget-usd is refused naming the fix; --state-dir, --output-format json, batch list / status and --resume --output work; a local --resume of it is refused", async () => {
    await queue.writeItems(3);
    const batch = ["batch", "--items", "items.jsonl", "--prompt", "Answer {{item}}"];
    const down = await startRedisServer();
    const downUrl = down.url;
    await down.stop();
    const dry = await runCliInProcess(
      [...batch, "--queue", downUrl, "--dry-run", "--output-format", "json"],
      {
        cwd: queue.dir,
      },
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ type: "batch_dry_run", items: expect.any(Array) });
    expect(JSON.parse(dry.stdout).items).toHaveLength(3);
    const budget = await runCliInProcess([...batch, "--queue", queue.redis.url, "--max-budget-usd", "1"], {
      cwd: queue.dir,
    });
    expect(budget.code).toBe(2);
    expect(budget.stderr).toContain("--max-budget-usd needs a local batch");
    expect(budget.stderr).toContain("Drop --queue to cap the spend");
    const html = await runCliInProcess([...batch, "--queue", queue.redis.url, "--report"], {
      cwd: queue.dir,
    });
    expect(html.code).toBe(2);
    expect(html.stderr).toContain("--report needs a local batch");

    queue.startWorker(["--concurrency", "3", "--state-dir", "worker-state"]);
    const state = join(queue.dir, "state");
    const done = await queue.runProducer(
      [...batch, "--queue", queue.redis.url, "--id", "qj", "--state-dir", state, "--output-format", "json"],
      { cwd: queue.dir },
    );
    expect(done.code, done.stderr).toBe(0);
    const summary = JSON.parse(done.stdout);
    expect(summary).toMatchObject({
      type: "batch_result",
      status: "succeeded",
      batchId: "qj",
      queue: { url: queue.redis.url },
      totals: { succeeded: 3 },
      paths: { results: join(state, "batches", "qj", "results.jsonl") },
    });
    expect(summary.items).toHaveLength(3);
    // The worker keeps its transcripts in its own state directory.
    const transcripts = await readdir(join(queue.dir, "worker-state", "batches", "qj", "transcripts"));
    expect(transcripts.filter((name) => name.endsWith(".fltr"))).toHaveLength(3);

    const list = await runCliInProcess(["batch", "list", "--state-dir", state], { cwd: queue.dir });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^qj .*3\/3 succeeded, 0 failed, 0 pending .*finished/m);
    const status = await runCliInProcess(["batch", "status", "qj", "--state-dir", state], {
      cwd: queue.dir,
    });
    expect(status.stdout).toContain(`attach: forkloop batch --resume qj --queue ${queue.redis.url}`);
    // No HTML page listing no items: the queued batch's report is refused, naming its results.
    const page = await runCliInProcess(["report", "qj", "--state-dir", state], { cwd: queue.dir });
    expect(page.code).toBe(2);
    expect(page.stderr).toContain(`batch qj ran on the queue ${queue.redis.url}`);
    expect(page.stderr).toContain(join(state, "batches", "qj", "results.jsonl"));
    const local = await runCliInProcess(["batch", "--resume", "qj", "--state-dir", state], {
      cwd: queue.dir,
    });
    expect(local.code).toBe(2);
    expect(local.stderr).toContain(
      `batch qj runs on the queue ${queue.redis.url}; re-attach with \`forkloop batch --resume qj --queue ${queue.redis.url}\``,
    );
    const out = join(queue.dir, "elsewhere");
    const attached = await queue.runProducer(
      ["batch", "--resume", "qj", "--queue", queue.redis.url, "--state-dir", state, "--output", out],
      { cwd: queue.dir },
    );
    expect(attached.code, attached.stderr).toBe(0);
    expect((await readFile(join(out, "results.jsonl"), "utf8")).trim().split("\n")).toHaveLength(3);
  }, 60_000);

  it("item 5: a failed item is retried with backoff up to --attempts; on its last attempt the failure is its result (exit 6)", async () => {
    await queue.writeItems(3);
    const run = (id: string, attempts: string) =>
      queue.runProducer(
        [
          "batch",
          "--items",
          "items.jsonl",
          "--prompt",
          "Answer {{item}}",
          "--queue",
          queue.redis.url,
          "--id",
          id,
          "--attempts",
          attempts,
          "--retry-delay",
          "200",
        ],
        { cwd: queue.dir },
      );
    // The worker's first model request is refused (400, not retryable by the client): one item fails once.
    const retrying = queue.startWorker(["--concurrency", "1"], { FORKLOOP_SIM_FAULTS: "400@1" });
    const retried = await run("retried", "2");
    expect(retried.code, retried.stderr).toBe(0);
    expect(retrying.stderr()).toMatch(/^retry {2}retried \S*items\.jsonl:1: invalid_request_error/m);
    expect(retrying.stderr()).toMatch(/^ok {5}retried \S*items\.jsonl:1 \(attempt 2\)$/m);
    const lines = await queue.readResults("retried");
    expect(lines.map((line) => line.attempts).sort()).toEqual([1, 1, 2]);
    retrying.child.kill("SIGTERM");
    await retrying.exited;

    queue.startWorker(["--concurrency", "1"], { FORKLOOP_SIM_FAULTS: "400@1" });
    const failed = await run("failed-once", "1");
    expect(failed.code, failed.stderr).toBe(6);
    const failures = (await queue.readResults("failed-once")).filter((line) => line.status === "failed");
    expect(failures).toHaveLength(1);
    expect(failures[0]?.attempts).toBe(1);
    expect(failures[0]?.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  }, 60_000);
});
