import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildReport } from "./batch-report.js";
import { type ItemExecution, type ItemExecutor, type ItemOutcome, runBatch } from "./batch-runner.js";
import type { Claim, JobItem } from "./job-backend.js";
import { openLocalJournalBackend, readJournal } from "./local-journal-backend.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-runner-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const items: JobItem[] = Array.from({ length: 12 }, (_, index) => ({
  id: `i${index}`,
  label: `file${index}.ts`,
  prompt: `Summarize file${index}.ts`,
}));

function ok(tokens: number): ItemOutcome {
  return {
    ok: true,
    result: {
      turns: 2,
      usage: {
        inputTokens: tokens,
        outputTokens: 1,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 9 * tokens,
        apiCalls: 2,
      },
      costUsd: 0.001,
      durationMs: 1,
      terminal: "completed",
      text: "summary",
    },
  };
}

/** An in-process executor that records what it was asked to run (the pool is tested in e2e). */
function fakeExecutor(decide: (claim: Claim) => Promise<ItemOutcome>) {
  const calls: { ids: string[]; warm: boolean }[] = [];
  let running = 0;
  let peak = 0;
  const executor: ItemExecutor = {
    startAll(claims, warm) {
      calls.push({ ids: claims.map((claim) => claim.item.id), warm });
      return claims.map((claim): ItemExecution => {
        running++;
        peak = Math.max(peak, running);
        let cancel: (reason: string) => void = () => {};
        const cancelled = new Promise<ItemOutcome>((resolve) => {
          cancel = () => resolve({ ok: "cancelled" });
        });
        const result = Promise.race([decide(claim), cancelled]).finally(() => running--);
        return { result, cancel: (reason) => cancel(reason) };
      });
    },
  };
  return { executor, calls, peak: () => peak };
}

describe("batch runner", () => {
  it("R-F4: the first wave goes out together with warming, later items one by one; concurrency is respected", async () => {
    const backend = await openLocalJournalBackend({ dir });
    await backend.enqueue(items);
    const fake = fakeExecutor(async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return ok(10);
    });
    const summary = await runBatch({ backend, executor: fake.executor, concurrency: 4 });
    await backend.close();
    expect(summary.interrupted).toBe(false);
    expect(fake.calls[0]).toEqual({ ids: ["i0", "i1", "i2", "i3"], warm: true });
    expect(fake.calls.slice(1).every((call) => call.ids.length === 1 && !call.warm)).toBe(true);
    expect(fake.peak()).toBe(4);
    const report = buildReport("b", summary.states, summary.wallMs);
    expect(report.totals).toMatchObject({ items: 12, succeeded: 12, failed: 0, pending: 0, turns: 24 });
    expect(report.totals.cacheReadShare).toBeCloseTo(0.9);
  });

  it("R-V3: the first wave's claims are asked for together, so their journal records share one durable write", async () => {
    const backend = await openLocalJournalBackend({ dir });
    await backend.enqueue(items);
    const fake = fakeExecutor(async () => ok(1));
    // Claims pending at once before the first wave starts (later, the slots refill side by side anyway).
    let pending = 0;
    let peakPending = 0;
    const claim = backend.claim.bind(backend);
    backend.claim = async (workerId) => {
      pending++;
      if (fake.calls.length === 0) peakPending = Math.max(peakPending, pending);
      try {
        return await claim(workerId);
      } finally {
        pending--;
      }
    };
    const summary = await runBatch({ backend, executor: fake.executor, concurrency: 8 });
    await backend.close();
    // One at a time, a wave of 128 waited for 128 fsyncs in a row before its first request.
    expect(peakPending).toBe(8);
    expect(fake.calls[0]).toEqual({ ids: ["i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"], warm: true });
    expect(summary.states.filter((state) => state.status === "succeeded")).toHaveLength(12);
  });

  it("failures are data: journaled, reported, and the batch goes on", async () => {
    const backend = await openLocalJournalBackend({ dir });
    await backend.enqueue(items);
    const fake = fakeExecutor(async (claim) =>
      claim.item.id === "i3" ? { ok: false, error: { code: "model_error", message: "overloaded" } } : ok(1),
    );
    const summary = await runBatch({ backend, executor: fake.executor, concurrency: 3 });
    await backend.close();
    const report = buildReport("b", summary.states, summary.wallMs);
    expect(report.totals).toMatchObject({ succeeded: 11, failed: 1 });
    expect(report.items.find((line) => line.id === "i3")?.error).toEqual({
      code: "model_error",
      message: "overloaded",
    });
  });

  it("an interrupt cancels the running items without settling them, so a resume redoes exactly those", async () => {
    const backend = await openLocalJournalBackend({ dir });
    await backend.enqueue(items);
    const controller = new AbortController();
    let started = 0;
    const fake = fakeExecutor(async (claim) => {
      started++;
      if (claim.item.id === "i0") return ok(1);
      if (started >= 4) controller.abort("interrupt");
      return new Promise<ItemOutcome>(() => {}); // never finishes by itself
    });
    const summary = await runBatch({
      backend,
      executor: fake.executor,
      concurrency: 3,
      signal: controller.signal,
    });
    await backend.close();
    expect(summary.interrupted).toBe(true);
    const resumed = await openLocalJournalBackend({ dir });
    expect([...(await resumed.interrupted())].sort()).toEqual(["i1", "i2", "i3"]);
    const again = fakeExecutor(async () => ok(1));
    const second = await runBatch({ backend: resumed, executor: again.executor, concurrency: 3 });
    await resumed.close();
    expect(again.calls.flatMap((call) => call.ids)).not.toContain("i0");
    expect(second.states.every((state) => state.status === "succeeded")).toBe(true);
    const { records } = await readJournal(dir);
    const completions = records.filter((record) => record.type === "completed").map((record) => record.id);
    expect(completions.sort()).toEqual(items.map((item) => item.id).sort());
  });

  it("a running item is heartbeated in the journal (a distributed backend would re-queue a silent claim)", async () => {
    const backend = await openLocalJournalBackend({ dir });
    await backend.enqueue(items.slice(0, 1));
    const fake = fakeExecutor(async () => {
      // Finish only after two heartbeats are durable.
      for (;;) {
        const { records } = await readJournal(dir);
        if (records.filter((record) => record.type === "heartbeat").length >= 2) return ok(1);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    });
    await runBatch({ backend, executor: fake.executor, concurrency: 1, heartbeatMs: 5 });
    await backend.close();
    const { records } = await readJournal(dir);
    expect(
      records.map((record) => record.type).filter((type, index, all) => type !== all[index - 1]),
    ).toEqual(["enqueued", "claimed", "heartbeat", "completed"]);
  });

  it("running items show their tokens so far; once settled only the final result counts (no double count)", async () => {
    const backend = await openLocalJournalBackend({ dir });
    await backend.enqueue(items.slice(0, 1));
    let sawLive!: () => void;
    const live = new Promise<void>((resolve) => {
      sawLive = resolve;
    });
    const executor: ItemExecutor = {
      startAll: (claims) =>
        claims.map(() => ({
          result: live.then(() => ok(10)),
          cancel() {},
          usageSoFar: () => ({
            usage: {
              inputTokens: 7,
              outputTokens: 0,
              cacheCreationInputTokens: 0,
              cacheReadInputTokens: 0,
              apiCalls: 1,
            },
            costUsd: 0.5,
          }),
        })),
    };
    const settled: number[] = [];
    await runBatch({
      backend,
      executor,
      concurrency: 1,
      progressMs: 5,
      onEvent: (event) => {
        if (event.type === "progress" && event.snapshot.inputTokens === 7 && event.snapshot.costUsd === 0.5)
          sawLive();
        if (event.type === "item_settled") settled.push(event.snapshot.inputTokens);
      },
    });
    await backend.close();
    expect(settled).toEqual([10]);
  });

  it("--max-budget-usd: no item starts once spent + (running + 1) × average cost would pass the limit", async () => {
    const backend = await openLocalJournalBackend({ dir });
    await backend.enqueue(items);
    // Each item costs $0.001 (ok()); a limit of $0.0035 lets the 3rd start (0.002 + 1 × 0.001) but not a 4th.
    const fake = fakeExecutor(async () => ok(1));
    const summary = await runBatch({
      backend,
      executor: fake.executor,
      concurrency: 1,
      budget: { limitUsd: 0.0035, perItemEstimateUsd: 0.001 },
    });
    await backend.close();
    expect(summary.budgetReached).toBe(true);
    expect(summary.states.filter((state) => state.status === "succeeded")).toHaveLength(3);
  });

  it("R-R9: a failure stopOnFailure names stops the batch before any more item starts; cancelled slots are not refilled", async () => {
    const backend = await openLocalJournalBackend({ dir });
    await backend.enqueue(items);
    // As the pool does with a warm wave (runAll releaseAfterFailure): when i0 fails, the others
    // come back cancelled at once — before i0's failure is durable and the batch has stopped.
    let failFirst!: () => void;
    const firstFailed = new Promise<void>((resolve) => {
      failFirst = resolve;
    });
    const fake = fakeExecutor(async (claim) => {
      if (claim.item.id !== "i0") return firstFailed.then((): ItemOutcome => ({ ok: "cancelled" }));
      setImmediate(failFirst);
      return { ok: false, error: { code: "authentication_error", message: "invalid x-api-key" } };
    });
    const summary = await runBatch({
      backend,
      executor: fake.executor,
      concurrency: 3,
      stopOnFailure: (error) => (error.code === "authentication_error" ? "the key was refused" : undefined),
    });
    await backend.close();
    expect(summary.stopped).toBe("the key was refused");
    expect(fake.calls.flatMap((call) => call.ids)).toEqual(["i0", "i1", "i2"]);
    // R-R9: i0 is not settled as failed, and i1, i2 were cancelled: a resume redoes all three.
    expect(summary.states.map((state) => state.status)).toEqual([
      "running",
      "running",
      "running",
      ...Array(9).fill("pending"),
    ]);
  });

  it("R-R9: a key revoked mid-batch stops it whenever it comes — the failing items stay pending; an item's own failure is still settled", async () => {
    const backend = await openLocalJournalBackend({ dir });
    await backend.enqueue(items);
    const fake = fakeExecutor(async (claim) => {
      const index = Number(claim.item.id.slice(1));
      if (index < 4) return ok(10);
      if (index === 4) return { ok: false, error: { code: "max_turns", message: "ran out of turns" } };
      return { ok: false, error: { code: "authentication_error", message: "invalid x-api-key" } };
    });
    const summary = await runBatch({
      backend,
      executor: fake.executor,
      concurrency: 1,
      stopOnFailure: (error) => (error.code === "authentication_error" ? "the key was refused" : undefined),
    });
    await backend.close();
    expect(summary.stopped).toBe("the key was refused");
    expect(summary.states.map((state) => state.status)).toEqual([
      ...Array(4).fill("succeeded"),
      "failed",
      "running",
      ...Array(6).fill("pending"),
    ]);
    const resumed = await openLocalJournalBackend({ dir });
    expect((await resumed.list()).filter((state) => state.status === "pending")).toHaveLength(7);
    await resumed.close();
  });

  it("R-V3: a settled item's execution is let go while the batch goes on (slots refill in a loop, not a chain of promises)", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const many: JobItem[] = Array.from({ length: 300 }, (_, index) => ({
      id: `m${index}`,
      label: `m${index}`,
      prompt: `item ${index}`,
    }));
    const backend = await openLocalJournalBackend({ dir });
    await backend.enqueue(many);
    const started: WeakRef<ItemExecution>[] = [];
    let keptMidway: number | undefined;
    const executor: ItemExecutor = {
      startAll(claims) {
        return claims.map(() => {
          const execution: ItemExecution = {
            result: new Promise<void>((resolve) => setImmediate(resolve)).then(() => ok(1)),
            cancel() {},
          };
          started.push(new WeakRef(execution));
          // Midway, with the first 200 items long settled: how many executions are still reachable?
          if (started.length === 250)
            setImmediate(() => {
              gc();
              keptMidway = started.slice(0, 200).filter((ref) => ref.deref() !== undefined).length;
            });
          return execution;
        });
      },
    };
    const summary = await runBatch({ backend, executor, concurrency: 4 });
    await backend.close();
    expect(summary.states.filter((state) => state.status === "succeeded")).toHaveLength(300);
    // Chained refills kept every one of them (200) until the batch's end.
    expect(keptMidway).toBeLessThan(10);
  });
});
