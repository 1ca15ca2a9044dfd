import { sumUsage, ZERO_USAGE_TOTALS } from "@forkloop/loop-core";
import { startBatchSpan, withTraceContext } from "./batch-telemetry.js";
import type { ItemIsolator } from "./item-isolation.js";
import type { Claim, ItemError, ItemResult, ItemState, JobBackend } from "./job-backend.js";
import type { ProgressSnapshot } from "./progress-display.js";

/** How one item ended; a failure is data (it is journaled and reported, the batch goes on). */
export type ItemOutcome =
  | { readonly ok: true; readonly result: ItemResult }
  | { readonly ok: false; readonly error: ItemError; readonly result?: ItemResult }
  /** Stopped by an interrupt: left unsettled in the journal so a resume redoes it. */
  | { readonly ok: "cancelled" };

export interface ItemExecution {
  readonly result: Promise<ItemOutcome>;
  cancel(reason: string): void;
  /**
   * Resolves once the item's first response has started — its request's prefix is then in the
   * prompt cache (R-F4) — and never if it ends without one. An isolated batch's warm-up item
   * releases the others on it; without it they wait until the warm-up has settled.
   */
  readonly responseStarted?: Promise<void>;
  /** Tokens and cost of the responses finished so far, for a live display while it runs. */
  usageSoFar?(): { readonly usage: ItemResult["usage"]; readonly costUsd: number };
}

/** Runs items as sub-agents; the orchestrator's worker pool is the production executor. */
export interface ItemExecutor {
  /**
   * Starts several items at once. With `warm`, the executor sends the first and releases the rest
   * once its response has started, so they read its cache entry instead of all missing (R-F4).
   */
  startAll(claims: readonly Claim[], warm: boolean): ItemExecution[];
}

export type BatchRunEvent =
  | {
      readonly type: "item_settled";
      readonly claim: Claim;
      readonly outcome: ItemOutcome;
      readonly snapshot: ProgressSnapshot;
    }
  | { readonly type: "progress"; readonly snapshot: ProgressSnapshot }
  | { readonly type: "settle_refused"; readonly claim: Claim; readonly reason: string };

export interface BatchRunOptions {
  readonly backend: JobBackend;
  readonly executor: ItemExecutor;
  readonly concurrency: number;
  /** Warm the cache with the first item before the rest of the first wave (R-F4); default true. */
  readonly warm?: boolean;
  readonly heartbeatMs?: number;
  /** How often a `progress` event refreshes the display (default 1 s). */
  readonly progressMs?: number;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: BatchRunEvent) => void;
  /** Milliseconds the pool is paused for (a 429's retry-after), shown by the progress display. */
  readonly pausedForMs?: () => number;
  readonly workerId?: string;
  /** Names the batch's span (R-V5, when telemetry is on). */
  readonly batchId?: string;
  readonly now?: () => number;
  /**
   * Asked for each failure: a message says it is a failure of the whole batch — the endpoint, the
   * key or the model is wrong, and every item would fail alike (R-R9) — and stops
   * the batch at once, whenever it comes (a key revoked mid-batch too). That item is not settled
   * and the in-flight ones are cancelled: all stay pending, so a plain resume finishes the work
   * once the cause is fixed.
   */
  readonly stopOnFailure?: (error: ItemError) => string | undefined;
  /**
   * `--max-budget-usd`: no item starts once the batch's spend (earlier runs included) plus the
   * expected cost of what is running and of the next item would pass `limitUsd`. An item is
   * expected to cost the average of the settled ones, or `perItemEstimateUsd` before any settled.
   */
  readonly budget?: { readonly limitUsd: number; readonly perItemEstimateUsd: number };
  /**
   * R-B2, R-B3: each item in its own copy of the project (`claim.workspace`), a succeeded item's
   * change applied to the workspace once before it is recorded as done (a conflict fails it with
   * code `conflict`); applies a kill -9 cut are finished first (`isolateItems`).
   */
  readonly isolation?: ItemIsolator;
}

export interface BatchRunSummary {
  readonly interrupted: boolean;
  /** Why `stopOnFailure` stopped the batch, when it did. */
  readonly stopped?: string;
  /** True when `budget` kept items from starting (they stay pending). */
  readonly budgetReached: boolean;
  readonly states: readonly ItemState[];
  readonly wallMs: number;
}

/**
 * Claims items from the backend and keeps `concurrency` of them running until none is left.
 * Every outcome is settled in the backend before the next item is claimed for that slot, so a
 * crash loses at most the items in flight — and those read as interrupted on resume.
 */
export async function runBatch(options: BatchRunOptions): Promise<BatchRunSummary> {
  const now = options.now ?? Date.now;
  const started = now();
  const initial = await options.backend.list();
  const counters = {
    total: initial.length,
    skipped: initial.filter((state) => state.status === "succeeded" || state.status === "failed").length,
    succeeded: 0,
    failed: 0,
    running: 0,
    usage: ZERO_USAGE_TOTALS,
    costUsd: 0,
  };
  const snapshot = (): ProgressSnapshot => {
    const paused = options.pausedForMs?.() ?? 0;
    // Settled items count with their final result; running ones with what they used so far.
    let usage = counters.usage;
    let costUsd = counters.costUsd;
    for (const { execution } of inFlight.values()) {
      const live = execution.usageSoFar?.();
      if (!live) continue;
      usage = sumUsage(usage, live.usage);
      costUsd += live.costUsd;
    }
    return {
      total: counters.total,
      skipped: counters.skipped,
      succeeded: counters.succeeded,
      failed: counters.failed,
      running: counters.running,
      ...usage,
      costUsd,
      elapsedMs: now() - started,
      ...(paused > 0 ? { pausedForMs: paused } : {}),
    };
  };

  const inFlight = new Map<string, { claim: Claim; execution: ItemExecution }>();
  let interrupted = options.signal?.aborted ?? false;
  let stopped: string | undefined;
  const stopAll = (reason: string) => {
    for (const { execution } of inFlight.values()) execution.cancel(reason);
  };
  const onAbort = () => {
    interrupted = true;
    stopAll("interrupted");
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  // Heartbeats say "still working on it" to the backend (a distributed one re-queues silent
  // claims); the progress tick keeps the ETA and pause notice fresh between settles.
  const heartbeat = setInterval(() => {
    for (const { claim } of inFlight.values()) void options.backend.heartbeat(claim).catch(() => {});
  }, options.heartbeatMs ?? 15_000);
  heartbeat.unref();
  const tick = setInterval(
    () => options.onEvent?.({ type: "progress", snapshot: snapshot() }),
    options.progressMs ?? 1_000,
  );
  tick.unref();

  const workerId = options.workerId ?? `pid-${process.pid}`;
  const isolation = options.isolation;
  const settle = async (claim: Claim, finished: ItemOutcome): Promise<void> => {
    counters.running--;
    // A settle that throws (the journal could not be written) leaves the copy and any plan for
    // the resume: it sweeps the one and finishes the other.
    const outcome = await settleItem(claim, finished);
    await isolation?.release(claim, outcome);
  };
  const settleItem = async (claim: Claim, finished: ItemOutcome): Promise<ItemOutcome> => {
    if (finished.ok === "cancelled") return finished; // not settled: the journal shows it as interrupted
    const wholeBatch = finished.ok === false ? options.stopOnFailure?.(finished.error) : undefined;
    if (wholeBatch !== undefined) {
      // R-R9: not the item's failure — left unsettled (pending on resume), and the batch stops.
      if (stopped === undefined) {
        stopped = wholeBatch;
        stopAll("stopped");
      }
      return { ok: "cancelled" };
    }
    // R-B3: with isolation, a success counts once its change is in the workspace (or it is a
    // conflict); the isolator records the outcome under its apply lock.
    if (isolation !== undefined)
      return isolation.settle(claim, finished, options.backend, (outcome) => record(claim, outcome));
    await record(claim, finished);
    return finished;
  };
  const record = async (claim: Claim, outcome: Exclude<ItemOutcome, { ok: "cancelled" }>): Promise<void> => {
    if (outcome.result) {
      counters.usage = sumUsage(counters.usage, outcome.result.usage);
      counters.costUsd += outcome.result.costUsd;
    }
    const settled =
      outcome.ok === true
        ? await options.backend.complete(claim, outcome.result)
        : await options.backend.fail(claim, outcome.error, outcome.result);
    if (!settled.ok) {
      options.onEvent?.({ type: "settle_refused", claim, reason: settled.reason });
      return;
    }
    if (outcome.ok === true) counters.succeeded++;
    else counters.failed++;
    options.onEvent?.({ type: "item_settled", claim, outcome, snapshot: snapshot() });
  };

  // R-R4: the backend could not record something (a full disk): nothing more is claimed, the
  // running items are cancelled (they stay unsettled, so a resume redoes them), and runBatch
  // rejects with the error once they have stopped — never a result that is not on disk.
  let backendFailure: { error: unknown } | undefined;
  const stop = (error: unknown): void => {
    if (backendFailure) return;
    backendFailure = { error };
    interrupted = true;
    for (const { execution } of inFlight.values()) execution.cancel("the journal could not be written");
  };

  const earlier = initial.filter((state) => state.result !== undefined);
  const spentEarlier = earlier.reduce((sum, state) => sum + (state.result?.costUsd ?? 0), 0);
  let budgetReached = false;
  const budgetAllows = (starting: number): boolean => {
    const budget = options.budget;
    if (budget === undefined) return true;
    const settled = earlier.length + counters.succeeded + counters.failed;
    const spent = spentEarlier + counters.costUsd;
    const perItem = settled > 0 ? spent / settled : budget.perItemEstimateUsd;
    return spent + (counters.running + starting + 1) * perItem <= budget.limitUsd;
  };

  /**
   * R-B3: items a kill -9 stopped while their change was being written are finished from their
   * plans and settled first (never run again); an earlier run's item copies are removed.
   */
  const recoverApplies = async (): Promise<void> => {
    const pending = (await options.backend.pendingApplies?.()) ?? [];
    if (isolation === undefined) {
      if (pending.length > 0)
        throw new Error(
          `${pending.length} items were being applied when the batch stopped; resume it with isolation`,
        );
      return;
    }
    await isolation.begin(pending);
    // Every one recorded before any is released: the members of a group share one plan, which
    // the first member's release removes, or the last one recovered when the first's record was
    // durable before the stop (a kill in between finds it on the next resume).
    const outcomes: ItemOutcome[] = [];
    for (const apply of pending)
      outcomes.push(await isolation.recover(apply, (settled) => record(apply.claim, settled)));
    for (const [index, apply] of pending.entries()) await isolation.release(apply.claim, outcomes[index]!);
  };

  const claimUpTo = async (count: number): Promise<Claim[]> => prepareAll(await claimOnly(count));

  const claimOnly = async (count: number): Promise<Claim[]> => {
    if (interrupted || stopped !== undefined) return [];
    let allowed = 0;
    while (allowed < count && budgetAllows(allowed)) allowed++;
    // R-V3: the claims are asked for together, so the journal writes their records in one group
    // commit: a first wave of 128 waits for one fsync, not 128 in a row, before its first request.
    const claimed = await Promise.allSettled(
      Array.from({ length: allowed }, () => options.backend.claim(workerId)),
    );
    const claims: Claim[] = [];
    for (const settled of claimed) {
      if (settled.status === "rejected") stop(settled.reason);
      else if (settled.value !== null) claims.push(settled.value);
    }
    // The budget held items back only if every claim it allowed found one (the queue went on).
    if (allowed < count && claims.length === allowed && backendFailure === undefined) budgetReached = true;
    return claims;
  };

  const prepareAll = async (claims: Claim[]): Promise<Claim[]> => {
    if (isolation === undefined) return claims;
    // R-B2: each its own copy of the project before it starts, the first wave's made side by
    // side (a failure here stops the batch; the item stays claimed, so a resume runs it).
    const prepared = await Promise.allSettled(claims.map((claim) => isolation.prepare(claim)));
    return prepared.flatMap((settled) => {
      if (settled.status === "fulfilled") return [settled.value];
      stop(settled.reason);
      return [];
    });
  };

  const start = (claims: readonly Claim[], warm: boolean): ItemExecution[] => {
    const executions = options.executor.startAll(
      claims.map((claim) => withTraceContext(claim, batchSpan)),
      warm,
    );
    if (executions.length !== claims.length)
      throw new Error(`executor returned ${executions.length} executions for ${claims.length} claims`);
    return executions;
  };

  /** Starts claims together (the first wave warms the cache, R-F4); each then runs in a slot of its own. */
  const launch = (claims: readonly Claim[], warm: boolean): Promise<void>[] => {
    if (claims.length === 0) return [];
    const executions = start(claims, warm);
    return claims.map((claim, index) => runSlot(claim, executions[index]!));
  };

  /**
   * R-B2: an isolated first wave — each item starts as soon as its own copy is made, not when the
   * wave's last copy is (copies are made a few at a time: bench/batch-isolation). With `warm`
   * (R-F4) the first starts alone, and each other one waits too until the first's response has
   * started (its prefix is then in the cache) or the first has settled: a failure every item would
   * repeat has then stopped the batch (R-R9), and the others are left unsent, pending on resume.
   */
  const launchIsolated = async (wave: readonly Claim[], warm: boolean): Promise<void> => {
    let warmedUp: () => void = () => {};
    const warmUp = warm
      ? new Promise<void>((resolve) => {
          warmedUp = resolve;
        })
      : undefined;
    await Promise.all(
      wave.map(async (claim, index) => {
        const [prepared] = await prepareAll([claim]);
        const leader = index === 0;
        if (!leader) await warmUp;
        if (prepared === undefined) {
          if (leader) warmedUp();
          return;
        }
        if (interrupted || stopped !== undefined) {
          if (leader) warmedUp();
          // Never started: it stays claimed, so a resume runs it; its copy goes back to the pool.
          await isolation?.release(prepared, { ok: "cancelled" });
          return;
        }
        const [execution] = start([prepared], false);
        if (leader) void execution!.responseStarted?.then(warmedUp);
        await runSlot(prepared, execution!, leader ? warmedUp : undefined);
      }),
    );
  };

  /**
   * A slot runs its item, then refills itself with the next claim, one at a time (the cache is warm
   * by then), in a loop: a refill awaited inside the previous item's continuation would chain every
   * item's promise, and keep its execution, until the batch ends — memory growing with the items
   * (R-V3).
   */
  const runSlot = async (
    first: Claim,
    firstExecution: ItemExecution,
    firstSettled?: () => void,
  ): Promise<void> => {
    let claim = first;
    let execution = firstExecution;
    let settledFirst = firstSettled;
    for (;;) {
      counters.running++;
      inFlight.set(claim.item.id, { claim, execution });
      // An interrupt may arrive while the executor is starting this item: cancel it too.
      if (interrupted || stopped !== undefined) execution.cancel(interrupted ? "interrupted" : "stopped");
      const outcome = await execution.result.catch(
        (error: unknown): ItemOutcome => ({
          ok: false,
          error: {
            code: "executor_error",
            message: error instanceof Error ? error.message : String(error),
          },
        }),
      );
      inFlight.delete(claim.item.id);
      try {
        await settle(claim, outcome);
      } catch (error) {
        stop(error);
        return;
      } finally {
        settledFirst?.();
        settledFirst = undefined;
      }
      // A cancelled item was stopped on purpose (an interrupt, or the batch stopping): no refill.
      if (outcome.ok === "cancelled") return;
      const [next] = await claimUpTo(1);
      if (next === undefined) return;
      claim = next;
      execution = start([next], false)[0]!;
    }
  };

  const batchSpan = startBatchSpan(options.batchId ?? "local", "local");
  let everySettled = false;
  try {
    await recoverApplies();
    const warm = options.warm ?? true;
    const firstWave = await claimOnly(Math.max(1, options.concurrency));
    options.onEvent?.({ type: "progress", snapshot: snapshot() });
    if (isolation === undefined) await Promise.all(launch(firstWave, warm));
    else await launchIsolated(firstWave, warm);
    everySettled =
      !interrupted &&
      stopped === undefined &&
      backendFailure === undefined &&
      (await options.backend.list()).every(
        (state) => state.status === "succeeded" || state.status === "failed",
      );
  } finally {
    clearInterval(heartbeat);
    clearInterval(tick);
    // A copy it could not remove is swept on resume; a base ref, by the resume that finds every item settled.
    await isolation?.finish(everySettled).catch(() => {});
    options.signal?.removeEventListener("abort", onAbort);
    batchSpan?.end(backendFailure === undefined ? "ok" : { error: "the journal could not be written" }, {
      "forkloop.batch.items.succeeded": counters.succeeded,
      "forkloop.batch.items.failed": counters.failed,
      "forkloop.batch.items.skipped": counters.skipped,
      "forkloop.cost_usd": counters.costUsd,
    });
  }
  if (backendFailure) throw backendFailure.error;
  return {
    interrupted,
    ...(stopped === undefined ? {} : { stopped }),
    budgetReached,
    states: await options.backend.list(),
    wallMs: now() - started,
  };
}
