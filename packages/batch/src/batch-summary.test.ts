import { describe, expect, it } from "vitest";
import { describeLocalOutcome, describeQueuedOutcome, finishedBatchStatus } from "./batch-summary.js";
import type { LocalBatchOutcome } from "./local-batch-run.js";
import type { QueueWorkerEvent } from "./queue-worker.js";
import { describeWorkerEvent } from "./queue-worker-log.js";
import type { QueuedBatchOutcome } from "./queued-batch-run.js";

const totals = (succeeded: number, failed: number, pending: number) => ({ succeeded, failed, pending });
const resume = "forkloop batch --resume b1";

/** A local batch that ran, with the totals and the summary fields the decision reads. */
function ran(counts: ReturnType<typeof totals>, rest: Record<string, unknown> = {}): LocalBatchOutcome {
  const { summary, ...outcome } = rest;
  return {
    kind: "ran",
    spec: { id: "b1" },
    report: { totals: counts },
    summary: { interrupted: false, budgetReached: false, ...(summary as object) },
    ...outcome,
  } as unknown as LocalBatchOutcome;
}

describe("how a batch ended, the status its exit code follows (R-R9, R-B7)", () => {
  it("a batch that ran to its end: succeeded only when every item did, failed when none did", () => {
    expect(finishedBatchStatus(totals(3, 0, 0))).toBe("succeeded");
    expect(finishedBatchStatus(totals(2, 1, 0))).toBe("partial");
    expect(finishedBatchStatus(totals(0, 3, 0))).toBe("failed");
    expect(finishedBatchStatus(totals(2, 0, 1))).toBe("partial");
  });

  it("a local batch's stop, interrupt, failed reduce and budget each name the command that goes on", () => {
    const stopped = describeLocalOutcome(
      ran(totals(1, 0, 2), {
        summary: { stopped: "401 from the API" },
        stopFailure: { resumeWith: " (fix the key)" },
      }),
      { resume, limitUsd: undefined },
    );
    expect(stopped).toEqual({
      status: "stopped",
      notices: [
        `forkloop batch b1: stopped: 401 from the API; 2 items left pending — fix it, then \`${resume} (fix the key)\` finishes them.`,
      ],
    });
    expect(
      describeLocalOutcome(ran(totals(1, 0, 2), { summary: { interrupted: true } }), { resume, limitUsd: 1 }),
    ).toEqual({ status: "interrupted", notices: [`interrupted: resume with \`${resume}\``] });
    const reduceFailed = ran(totals(3, 0, 0), {
      reduce: { kind: "ran", record: { status: "failed", error: { code: "model_error", message: "busy" } } },
    });
    expect(describeLocalOutcome(reduceFailed, { resume, limitUsd: undefined }).status).toBe("partial");
    const overBudget = ran(totals(3, 0, 0), { reduceOverBudget: { spentUsd: 0.5, estimateUsd: 0.25 } });
    expect(describeLocalOutcome(overBudget, { resume, limitUsd: 0.6 }).notices[0]).toContain(
      "the items spent $0.5000, so the reduce (about $0.2500) was not started",
    );
    const budget = ran(totals(1, 0, 2), { summary: { budgetReached: true } });
    expect(describeLocalOutcome(budget, { resume, limitUsd: 0.6 })).toEqual({
      status: "budget_reached",
      notices: [
        `forkloop batch: --max-budget-usd 0.6 reached: 2 items not started; resume with a higher budget: \`${resume} --max-budget-usd N\``,
      ],
    });
    expect(describeLocalOutcome(ran(totals(0, 2, 0)), { resume, limitUsd: undefined })).toEqual({
      status: "failed",
      notices: [],
    });
  });

  it("a finished batch resumed runs nothing and says so; a queued one lost from Redis says where its results are", () => {
    const finished = { kind: "finished", spec: { id: "b1" }, report: { totals: totals(2, 1, 0) } };
    expect(
      describeLocalOutcome(finished as unknown as LocalBatchOutcome, { resume, limitUsd: undefined }),
    ).toEqual({
      status: "succeeded",
      notices: ["forkloop batch b1 is finished (2 items succeeded, 1 failed): nothing to run."],
    });
    const lost = {
      spec: { id: "q1" },
      summary: { lost: true, interrupted: false },
      report: { totals: totals(1, 0, 3) },
      paths: { results: "/out/results.jsonl" },
      queue: "redis://127.0.0.1:6379",
    } as unknown as QueuedBatchOutcome;
    const ending = describeQueuedOutcome(lost);
    expect(ending.status).toBe("partial");
    expect(ending.notices[0]).toMatch(
      /^batch q1 was lost from Redis at redis:\/\/127\.0\.0\.1:6379 with 3 items unfinished; the 1 result received are in \/out\/results\.jsonl/,
    );
  });

  it("R-B7: a queued batch's re-attach command names the --cwd it was given, as a local resume's does", () => {
    const cut = {
      spec: { id: "q2" },
      summary: { lost: false, interrupted: false },
      report: { totals: totals(2, 0, 0) },
      paths: { results: "/out/results.jsonl" },
      queue: "redis://127.0.0.1:6379",
      reduce: { kind: "interrupted", record: {} },
    } as unknown as QueuedBatchOutcome;
    expect(describeQueuedOutcome(cut, { cwd: "../proj" }).notices).toEqual([
      "interrupted during the reduce: re-attach with `forkloop batch --resume q2 --queue redis://127.0.0.1:6379 --cwd ../proj` to run it, and nothing else",
    ]);
    expect(describeQueuedOutcome(cut).notices[0]).toContain("--queue redis://127.0.0.1:6379` to run it");
  });
});

describe("R-B1 a queue worker's log lines", () => {
  const claim = { item: { label: "a.ts" }, attempt: 2 };
  it("an item's end, its retry and a refused batch are one line each; a host failure is not logged here", () => {
    const line = (event: unknown) => describeWorkerEvent(event as QueueWorkerEvent, "redis://h:6379");
    expect(line({ type: "item_settled", batchId: "b1", claim, outcome: { ok: true }, recorded: true })).toBe(
      "ok     b1 a.ts (attempt 2)",
    );
    expect(
      line({
        type: "item_settled",
        batchId: "b1",
        claim,
        outcome: { ok: false, error: { code: "max_turns", message: "8 turns" } },
        recorded: false,
      }),
    ).toBe("FAILED b1 a.ts (attempt 2) max_turns: 8 turns (already recorded by another run: dropped)");
    expect(line({ type: "error", message: "connection lost" })).toBe("redis redis://h:6379: connection lost");
    expect(line({ type: "host_failure", batchId: "b1", claim, reason: "401" })).toBeUndefined();
  });
});
