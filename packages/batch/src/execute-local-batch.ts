import { join } from "node:path";
import type { Tool } from "@forkloop/loop-core";
import { poolClock, type SharedClock, type SubAgentBashOptions } from "@forkloop/orchestrator";
import type { ModelSource } from "@forkloop/sdk";
import { describeEndpointFailure, type EndpointFailure, endpointUrl } from "@forkloop/sdk/internal";
import type { Settings } from "@forkloop/tools";
import { createBatchExecutor, createBatchPool } from "./batch-executor.js";
import { type ReduceOutcome, readReduce, reduceDue } from "./batch-reduce.js";
import { type BatchReport, buildReport, finalSnapshot } from "./batch-report.js";
import { type BatchRunSummary, runBatch } from "./batch-runner.js";
import type { BatchSpec } from "./batch-store.js";
import type { ItemIsolator } from "./item-isolation.js";
import type { ItemState, JobBackend } from "./job-backend.js";
import { type BatchApiRun, batchApiEndpoint, openBatchApi } from "./message-batches-api.js";
import { plural } from "./plural.js";
import { formatDuration, ProgressDisplay, type ProgressStream } from "./progress-display.js";
import { runReduceStep } from "./reduce-step.js";
import { limitedRequestGate, memoryRequestLimiter } from "./request-limiter.js";

/** A 429 that moves the pool's pause on by less than this is the pause already said. */
const SAME_PAUSE_MS = 5_000;

export interface BatchExecution {
  readonly spec: BatchSpec;
  readonly dir: string;
  readonly backend: JobBackend;
  readonly source: ModelSource;
  readonly settings: Settings;
  /** The batch's MCP tools (R-M1), run in this process for every item. */
  readonly mcpTools: readonly Tool[];
  /** How every item's Bash runs (the sandbox, the settings' env), as the parent's would. */
  readonly bash: SubAgentBashOptions;
  readonly concurrency: number;
  readonly warm: boolean;
  readonly budget?: { readonly limitUsd: number; readonly perItemEstimateUsd: number };
  /** R-B2, R-B3: each item in its own copy, its change applied once. */
  readonly isolation?: ItemIsolator;
  /** R-B8: `--api batches` — the model requests go as Message Batch rounds. */
  readonly api?: "messages" | "batches";
}

/**
 * What a local batch's run takes from its host (the CLI's command context): where progress goes,
 * the environment, the interrupt and the clock.
 */
export interface BatchHost {
  /** The live progress display and its notices. */
  readonly stderr: ProgressStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on the first interrupt: running items stop, their state is kept for --resume. */
  readonly signal: AbortSignal;
  /** Runs a handler before a later interrupt exits at once; absent in-process. */
  readonly beforeForcedExit?: (handler: () => Promise<void>) => () => void;
  /** R-R11: the clock model requests wait on; the system clock when absent. */
  readonly clock?: SharedClock;
}

export interface BatchOutcome {
  readonly summary: BatchRunSummary;
  readonly report: BatchReport;
  /** Why a failure of the whole batch stopped it, and how it resumes once fixed (R-R9). */
  readonly stopFailure?: EndpointFailure;
  /** R-B7: the reduce, when the batch has one and its map is finished. */
  readonly reduce?: ReduceOutcome;
  /**
   * R-B7: `--max-budget-usd` left no room for the reduce (the items' spend plus its estimate, an
   * item's average, is over the limit): it did not start, and a resume with a higher budget runs it.
   */
  readonly reduceOverBudget?: { readonly spentUsd: number; readonly estimateUsd: number };
}

/**
 * Runs the batch's pending items as sub-agents in the orchestrator's worker pool with the live
 * progress display on stderr, and builds the report. The caller writes and prints it.
 */
export async function executeBatch(run: BatchExecution, context: BatchHost): Promise<BatchOutcome> {
  const { spec, source } = run;
  const display = new ProgressDisplay(context.stderr);
  // R-B8: opened (and the endpoint checked) before the pool starts any item.
  const batchApi: BatchApiRun | undefined =
    run.api === "batches"
      ? await openBatchApi(source, run.dir, context.env, (line) => display.log(line))
      : undefined;
  const pool = createBatchPool(
    batchApi === undefined ? source : { ...source, endpoint: batchApiEndpoint(source.endpoint) },
    run.concurrency,
    context.clock,
  );
  const clock = poolClock(context.clock);
  // R-B10: a Ctrl+C leaves the open batches recorded for --resume; a second one cancels them.
  const dropForcedExit =
    batchApi === undefined
      ? undefined
      : context.beforeForcedExit?.(async () => {
          const ids = await batchApi.rounds.cancelOpen();
          if (ids.length > 0) {
            context.stderr.write(
              `forkloop batch ${spec.id}: cancelled ${ids.length === 1 ? "the open message batch" : `${ids.length} open message batches`} (a second Ctrl+C): ${ids.join(", ")}; --resume sends their unanswered requests again\n`,
            );
          }
        });
  try {
    const endpoint = { url: endpointUrl(source), model: spec.model };
    let pausedUntil = 0;
    let retriesShown = 0;
    let stopFailure: EndpointFailure | undefined;
    // R-B1: `--rpm` (batch.json keeps it) gates every request of every item here.
    const { rpm } = spec;
    const requestSlot =
      rpm === undefined
        ? undefined
        : limitedRequestGate(memoryRequestLimiter(rpm), (waitMs) =>
            display.log(
              `at the --rpm limit of ${rpm} requests/min: requests wait, the next in ${formatDuration(waitMs)}`,
            ),
          );
    const created = await createBatchExecutor({
      spec,
      cwd: spec.cwd,
      settings: run.settings,
      source,
      pool,
      bash: run.bash,
      home: context.env.HOME,
      mcpTools: run.mcpTools,
      transcriptsDir: join(run.dir, "transcripts"),
      // Which interrupted items may repeat a side effect on resume ("may have run twice").
      recordSideEffect: (claim, tool) => run.backend.recordSideEffect(claim, tool),
      failsEveryItem: (error) => describeEndpointFailure(error, endpoint) !== undefined,
      onNotice: (line) => display.log(line),
      ...(requestSlot === undefined ? {} : { requestSlot }),
      ...(batchApi === undefined ? {} : { modelTransport: batchApi.rounds.transport }),
      onEvent: (claim, event) => {
        // R-R11: a far rate-limit reset is the pool's one pause line below, not an attempt.
        if (event.type === "api_retry" && event.resumesAt === undefined && event.attempt > retriesShown) {
          // Once per attempt number: a wave of items retrying together is one line, not one each.
          retriesShown = event.attempt;
          display.log(
            `retrying ${claim.item.label} (attempt ${event.attempt}/${event.maxRetries} in ${formatDuration(event.delayMs)}): ${event.error} — ${endpoint.url}`,
          );
        }
        if (event.type === "rate_limited" && event.until > pausedUntil) {
          // The pool itself pauses every worker; this only tells the user why progress stalls.
          pool.pauseUntil(event.until);
          // R-R11: the 429s of items in flight together name one reset, apart by how their
          // responses arrived and by retry-after's whole seconds: one pause, one line.
          const samePause = event.until - pausedUntil < SAME_PAUSE_MS;
          pausedUntil = event.until;
          if (!samePause) {
            display.log(
              `rate limited (429 on ${claim.item.label}): pausing all workers for ${formatDuration(event.retryAfterMs)}, until ${new Date(event.until).toISOString()}; items wait, none fails`,
            );
          }
        }
      },
    });
    // R-B8: the rounds wait for every running item, so they must know which ones run.
    const executor = batchApi === undefined ? created : batchApi.rounds.track(created);
    const summary = await runBatch({
      batchId: run.spec.id,
      backend: run.backend,
      executor,
      concurrency: run.concurrency,
      warm: run.warm,
      signal: context.signal,
      pausedForMs: () => Math.max(0, pausedUntil - clock.now()),
      stopOnFailure: (error) => {
        stopFailure = describeEndpointFailure(error, endpoint);
        return stopFailure?.sentence;
      },
      ...(run.budget === undefined ? {} : { budget: run.budget }),
      ...(run.isolation === undefined ? {} : { isolation: run.isolation }),
      onEvent: (event) => {
        if (event.type === "item_settled") {
          const outcome = event.outcome;
          const result = outcome.ok === "cancelled" ? undefined : outcome.result;
          const status = outcome.ok === true ? "ok    " : "FAILED";
          const detail = outcome.ok === false ? ` ${outcome.error.code}: ${outcome.error.message}` : "";
          display.log(
            `${status} ${event.claim.item.label} (${plural(result?.turns ?? 0, "turn")}, $${(result?.costUsd ?? 0).toFixed(4)})${detail}`,
            event.snapshot,
          );
        } else if (event.type === "progress") {
          display.update(event.snapshot);
        } else {
          display.log(`not recorded: ${event.claim.item.label}: ${event.reason}`);
        }
      },
    });
    const open = batchApi?.rounds.openBatches() ?? [];
    if (summary.interrupted && open.length > 0) {
      display.log(
        `${open.length === 1 ? "message batch" : `${open.length} message batches`} ${open.join(", ")} still processing: recorded, so --resume polls ${open.length === 1 ? "it" : "them"}; Ctrl+C again within ${CANCEL_WINDOW_MS / 1000} s cancels ${open.length === 1 ? "it" : "them"}`,
      );
      if (context.beforeForcedExit !== undefined) await sleepMs(CANCEL_WINDOW_MS);
    }
    // R-B7: once every item is settled, the reduce (journaled: a kill here resumes into it alone).
    const mapDone =
      !summary.interrupted &&
      summary.stopped === undefined &&
      summary.states.every((state) => state.status === "succeeded" || state.status === "failed");
    let reduce: ReduceOutcome | undefined;
    const reduceOverBudget =
      spec.reduce !== undefined && mapDone && run.budget !== undefined
        ? await reduceBudgetCheck(run.dir, spec.reduce, summary.states, run.budget)
        : undefined;
    if (reduceOverBudget !== undefined) {
      display.log(
        `reduce: not started — --max-budget-usd ${run.budget?.limitUsd}: the items spent $${reduceOverBudget.spentUsd.toFixed(4)} and the reduce is estimated at $${reduceOverBudget.estimateUsd.toFixed(4)} (an item's average)`,
      );
    }
    if (spec.reduce !== undefined && mapDone && reduceOverBudget === undefined) {
      // R-B8: the map's pool sends Message Batch entries; the one reduce request goes online.
      const reducePool = batchApi === undefined ? pool : createBatchPool(source, 1, context.clock);
      reduce = await runReduceStep({
        spec: { ...spec, reduce: spec.reduce },
        dir: run.dir,
        states: summary.states,
        source,
        settings: run.settings,
        bash: run.bash,
        mcpTools: run.mcpTools,
        pool: reducePool,
        signal: context.signal,
        log: (line) => display.log(line),
      }).finally(() => (reducePool === pool ? undefined : reducePool.close()));
    }
    const reduceRecord =
      reduce?.record ?? (spec.reduce === undefined ? undefined : await readReduce(run.dir));
    const report = buildReport(spec.id, summary.states, summary.wallMs, {
      simulated: source.simulated,
      transcriptsDir: join(run.dir, "transcripts"),
      ...(reduceRecord === undefined ? {} : { reduce: reduceRecord }),
    });
    display.finish(finalSnapshot(report));
    return {
      summary,
      report,
      ...(stopFailure === undefined ? {} : { stopFailure }),
      ...(reduce === undefined ? {} : { reduce }),
      ...(reduceOverBudget === undefined ? {} : { reduceOverBudget }),
    };
  } finally {
    dropForcedExit?.();
    await pool.close();
    await batchApi?.close();
  }
}

/** After an interrupt with open Message Batches: the time a second Ctrl+C has to cancel them. */
const CANCEL_WINDOW_MS = 3_000;

function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * R-B7: whether `--max-budget-usd` has room for the reduce — undefined when it has (or a finished
 * reduce of these results is kept, which costs nothing), else the spend and the estimate. The
 * estimate is an item's average cost: the reduce is one agent on the items' prefix, reading more.
 */
async function reduceBudgetCheck(
  dir: string,
  prompt: string,
  states: readonly ItemState[],
  budget: { readonly limitUsd: number; readonly perItemEstimateUsd: number },
): Promise<{ readonly spentUsd: number; readonly estimateUsd: number } | undefined> {
  if (!(await reduceDue(dir, prompt, states))) return undefined;
  const costs = states.flatMap((state) => (state.result === undefined ? [] : [state.result.costUsd]));
  const spentUsd = costs.reduce((sum, cost) => sum + cost, 0);
  const estimateUsd = costs.length > 0 ? spentUsd / costs.length : budget.perItemEstimateUsd;
  return spentUsd + estimateUsd <= budget.limitUsd ? undefined : { spentUsd, estimateUsd };
}
