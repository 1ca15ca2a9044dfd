import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import {
  batchesDir,
  type ModelSource,
  type ProjectState,
  type ResolvedMcpServers,
  type RunEnvironment,
  refuseDisabledBypass,
} from "@forkloop/sdk";
import { permissionModeFacts, type SandboxMode } from "@forkloop/tools";
import { git, openWorkspaceIsolation } from "@forkloop/tools/workspace";
import { enqueueOnce } from "./batch-enqueue.js";
import { BatchError } from "./batch-error.js";
import { createBatchPool } from "./batch-executor.js";
import { dropSettledBase, refuseDirtyTree } from "./batch-isolation.js";
import type { BatchPlan } from "./batch-plan.js";
import { createPlannedBatch } from "./batch-plan.js";
import { parseReduceRecord, type ReduceLease, type ReduceOutcome, readReduce } from "./batch-reduce.js";
import { type BatchReport, finalSnapshot, toReduceLine } from "./batch-report.js";
import { type BatchSpec, batchDir, saveBatchSpec } from "./batch-store.js";
import { startBatchSpan } from "./batch-telemetry.js";
import type { JobItem } from "./job-backend.js";
import { reportWriteFailed } from "./journal-safety.js";
import { msFromEnv } from "./message-batches-api.js";
import { plural } from "./plural.js";
import { formatDuration, ProgressDisplay, type ProgressStream } from "./progress-display.js";
import { type connectQueue, openQueue, parseQueueUrl } from "./queue-connection.js";
import { enqueueRetryRound, openQueueLedger } from "./queue-ledger.js";
import { type QueuedRunSummary, runQueuedBatch } from "./queue-producer.js";
import { queuedBatchReport } from "./queue-report.js";
import {
  claimReduceLease,
  loadQueuedBatch,
  type QueuedBatch,
  type QueuedMcpServer,
  readChange,
  readReduceRecord,
  registerBatch,
  releaseReduceLease,
  renewReduceLease,
  writeReduceRecord,
} from "./queue-store.js";
import { openQueuedApplier, type QueuedApplier } from "./queued-applies.js";
import { namedMcpTools } from "./queued-batch-executor.js";
import { describeRedisError, isRedisError } from "./redis-errors.js";
import { runReduceStep } from "./reduce-step.js";
import { checkWritableDir } from "./writable-dir.js";
import { type WrittenReport, writeReport } from "./write-batch-report.js";

/** A new batch (its items listed, nothing written yet), or one already on the queue. */
export type QueueTarget =
  | {
      readonly kind: "new";
      readonly plan: Extract<BatchPlan, { kind: "new" }>;
      /** The MCP servers its items may use, by name: each worker starts its own (R-M1). */
      readonly mcpServers: readonly QueuedMcpServer[];
    }
  | { readonly kind: "attach"; readonly id: string };

/** A `--queue` batch's producer: the queue, the batch, and this host's project and output. */
export interface QueuedBatchRun {
  /** The URL as given: its password reaches Redis; messages and batch.json use it without one. */
  readonly url: string;
  readonly target: QueueTarget;
  readonly cwd: string;
  readonly state: ProjectState;
  /** Where results.jsonl and the report go (`--output DIR`), relative to `cwd`. */
  readonly output?: string | undefined;
  /** Runs per item before it counts as failed (default 3). */
  readonly attempts?: number | undefined;
  /** The first retry's delay, doubled per attempt (default 1 000 ms). */
  readonly retryDelayMs?: number | undefined;
  /** R-B1: model requests per minute across every worker, stored with the batch. */
  readonly rpm?: number | undefined;
  /**
   * R-B2 `--isolate` (a new batch): each item runs in a worktree of this checkout's last commit on
   * its worker, and its change is applied here once. A re-attach keeps what the batch started with.
   */
  readonly isolate?: boolean | undefined;
  /** The user's home, whose shell and settings files no applied change may write (R-S10). */
  readonly home?: string | undefined;
  /**
   * R-B4 `--retry-conflicts` (a re-attach): the items whose change was a conflict run again on
   * their workers, from this tree as it is now, and their new change is applied here once.
   */
  readonly retryConflicts?: boolean | undefined;
  /**
   * R-B7: what this host runs a `--reduce` batch's reduce with once every item is settled — the
   * run environment's settings, endpoint and Bash (`sandbox`: `--sandbox`). Without it the reduce
   * is not run (said), and a re-attach that has it runs it.
   */
  readonly reducer?: {
    readonly environment: RunEnvironment;
    readonly sandbox?: SandboxMode | undefined;
    /**
     * R-M1: this host's MCP servers (a new batch's `--mcp-config` over the settings'); the reduce
     * starts those the batch names, as a worker does. Without it, the settings' (a re-attach).
     */
    readonly mcpServers?: ResolvedMcpServers | undefined;
  };
  /**
   * R-B7, R-B1: how long this producer's claim on running the reduce outlives its last renewal
   * (`FORKLOOP_QUEUE_REDUCE_LEASE_MS`, default 30 s): a producer killed during the reduce holds
   * the next one back that long.
   */
  readonly reduceLeaseMs?: number | undefined;
}

/** Where the producer's progress and notices go, and its interrupt. */
export interface QueuedBatchHost {
  readonly stderr: ProgressStream;
  readonly signal: AbortSignal;
}

export interface QueuedBatchOutcome {
  readonly spec: BatchSpec;
  readonly summary: QueuedRunSummary;
  readonly report: BatchReport;
  readonly paths: WrittenReport;
  /** The queue's URL without its password, for the caller's messages. */
  readonly queue: string;
  /** R-B7: the reduce, when the batch has one and every item is settled. */
  readonly reduce?: ReduceOutcome;
  /** R-B7: why the reduce of a settled batch could not start here (the items' report is written). */
  readonly reduceNotRun?: string;
}

/**
 * `forkloop batch --queue URL` (R-B1): the batch goes to Redis as a BullMQ flow and
 * `forkloop worker` processes on any host run it; this shows the whole batch's progress and
 * writes results.jsonl and the report (the same files as a local batch) when it completes. An
 * `attach` re-attaches from any host. The batch's state directory is the project's, its
 * batch.json names the queue so `forkloop batch list` and `status` know where the items are.
 * Redis refusing mid-run (OOM, READONLY, NOAUTH …) is a BatchError `queue_redis_error` naming the fix.
 */
export async function executeQueuedBatch(
  run: QueuedBatchRun,
  host: QueuedBatchHost,
): Promise<QueuedBatchOutcome> {
  const { target } = run;
  const line = (text: string) => host.stderr.write(`${text}\n`);
  // The URL and Redis are checked before any state exists, so a typo leaves nothing behind.
  const address = parseQueueUrl(run.url);
  const connection = await openQueue(address, line);
  try {
    const { batch, items } =
      target.kind === "new"
        ? await createQueued(run, target, connection, address.display)
        : await attachQueued(run, target.id, connection, address.display);
    const spec = batch.spec;
    // R-B1: the same enqueue-once as a local batch, on the queue's ledger. A re-attach
    // adds the flow again only if the seal says its first add never finished.
    // R-V5: the batch's span; its trace context goes to the workers in each item's job data.
    const batchSpan = startBatchSpan(spec.id, "queue");
    const ledger = openQueueLedger(connection, batch, address.display, batchSpan?.traceparent);
    await enqueueOnce(ledger, target.kind === "new" ? items : undefined, {
      relist: { description: "the items stored with the batch", list: async () => items },
      repair: false,
      notice: line,
    });
    const started = target.kind === "attach" ? (await ledger.interrupted()).length : 0;
    const display = new ProgressDisplay(host.stderr);
    const limit = batch.rpm === undefined ? "" : ` · at most ${batch.rpm} requests/min`;
    const attached =
      target.kind === "new"
        ? ""
        : ` (re-attached${started > 0 ? `; ${plural(started, "item")} started without a result: running, or re-run once its lock expires` : ""})`;
    const mcp = (batch.mcpServers ?? []).map((server) => server.name);
    const servers =
      mcp.length === 0
        ? ""
        : ` · MCP servers ${mcp.join(", ")} (each worker starts its own, from its config)`;
    line(
      `forkloop batch ${spec.id}: ${plural(items.length, "item")} on ${address.display}${attached}${limit}${servers} · run them with \`forkloop worker --queue ${address.display}\` · results in ${spec.outputDir}`,
    );
    if (permissionModeFacts(spec.permissionMode).dangerous) {
      // R-B1 (trust): a worker runs a bypass batch only if its operator opted in.
      line(
        `forkloop batch ${spec.id}: bypassPermissions: only workers started with \`forkloop worker --allow-dangerously-skip-permissions\` run its items; any other worker fails them`,
      );
    }
    const applier = await openApplier(run, batch, connection, line);
    await retryConflicts(
      run,
      { batch, items, connection, traceparent: batchSpan?.traceparent },
      applier,
      line,
    );
    const summary = await runQueuedBatch({
      connection,
      batch,
      signal: host.signal,
      ...(applier === undefined ? {} : { applier }),
      onEvent(event) {
        if (event.type === "progress") display.update(event.snapshot);
        else if (event.type === "redis_error") display.log(`redis ${address.display}: ${event.message}`);
        else if (event.type === "batch_lost")
          display.log(
            `batch ${spec.id} is gone from Redis at ${address.display} (it restarted without persistence, or its keys were deleted or evicted): stopping; the results received so far are written`,
          );
        else if (event.type === "rolled_back")
          display.log(
            `Redis at ${address.display} lost ${plural(event.items, "recorded result")} (it restarted from an older snapshot): those items run again; the report counts every run`,
          );
        else if (event.type === "queue_paused")
          display.log(
            `rate limited (a worker got a 429): the queue is paused for ${formatDuration(event.forMs)} on every host`,
          );
        else {
          const { state } = event;
          const detail = state.error ? ` ${state.error.code}: ${state.error.message}` : "";
          display.log(
            `${state.status === "succeeded" ? "ok    " : "FAILED"} ${state.item.label} (${plural(state.result?.turns ?? 0, "turn")}, $${(state.result?.costUsd ?? 0).toFixed(4)})${detail}`,
            event.snapshot,
          );
        }
      },
    }).finally(() => applier?.close());
    // R-B4: every round's items are settled, so no worker fetches a retry round's base any more:
    // the ref this checkout held it by is deleted (a finished batch's re-attach sweeps one left behind).
    if (applier !== undefined && everySettled(summary)) await dropSettledBase(batchDir(run.state, spec.id));
    batchSpan?.end(summary.lost ? { error: "the batch is gone from Redis" } : "ok", {
      "forkloop.batch.items.succeeded": summary.states.filter((state) => state.status === "succeeded").length,
      "forkloop.batch.items.failed": summary.states.filter((state) => state.status === "failed").length,
    });
    const reduced = await reduceQueued(
      run,
      { spec, summary, connection, mcpServers: batch.mcpServers ?? [] },
      host.signal,
      (text) => display.log(text),
    );
    const reduce = typeof reduced === "string" ? undefined : reduced;
    const dir = batchDir(run.state, spec.id);
    const reduceRecord = reduce?.record ?? (spec.reduce === undefined ? undefined : await readReduce(dir));
    // Transcripts stay on the host whose worker ran the item; the reduce's is named when it is here.
    const transcripts = join(dir, "transcripts");
    const here =
      reduceRecord !== undefined && existsSync(toReduceLine(reduceRecord, transcripts).transcript ?? "");
    const report = queuedBatchReport(
      spec.id,
      summary,
      address.display,
      reduceRecord,
      here ? transcripts : undefined,
    );
    display.finish(finalSnapshot(report));
    const paths = await writeReport(spec.outputDir, report).catch((error: unknown) => {
      throw reportWriteFailed(error, spec);
    });
    return {
      spec,
      summary,
      report,
      paths,
      queue: address.display,
      ...(reduce === undefined ? {} : { reduce }),
      ...(typeof reduced === "string" ? { reduceNotRun: reduced } : {}),
    };
  } catch (error) {
    // R-R10: OOM, READONLY, NOAUTH… mid-run are one line naming the fix, not a stack trace.
    if (isRedisError(error))
      throw new BatchError("queue_redis_error", describeRedisError(error, address.display));
    throw error;
  } finally {
    connection.disconnect();
  }
}

type Redis = Awaited<ReturnType<typeof connectQueue>>;

/**
 * R-B7: a `--reduce` batch's reduce, run by its producer once every item settled on the workers
 * (none lost, the producer not interrupted): one agent on this host over the items' results,
 * journaled in the batch's directory here and in Redis — a producer killed during it, re-attached
 * on any host, runs it once more and nothing else; a finished one is kept.
 */
async function reduceQueued(
  run: QueuedBatchRun,
  done: {
    readonly spec: BatchSpec;
    readonly summary: QueuedRunSummary;
    readonly connection: Redis;
    readonly mcpServers: readonly QueuedMcpServer[];
  },
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<ReduceOutcome | string | undefined> {
  const { spec, summary, connection } = done;
  const prompt = spec.reduce;
  if (prompt === undefined || !everySettled(summary)) return undefined;
  if (run.reducer === undefined) return "this producer was given no run environment to run it with";
  const { environment, sandbox } = run.reducer;
  let source: ModelSource;
  let servers: ResolvedMcpServers | undefined;
  try {
    refuseDisabledBypass(spec.permissionMode, environment.settings);
    source = await environment.endpoint(undefined, spec.cwd);
    if (source.simulated) {
      // Its answer is kept in Redis as the batch's result for every host: never a fallback's.
      await source.close();
      throw new Error(
        "this host has no API key (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or an apiKeyHelper), so the reduce would run on the embedded simulator and its simulated answer would stand as the batch's result; set the key on this host (to simulate on purpose, point ANTHROPIC_BASE_URL at `forkloop sim` with any key)",
      );
    }
    // R-M1: the servers the batch names come from this host's configuration, as on a worker.
    servers =
      done.mcpServers.length === 0
        ? undefined
        : (run.reducer.mcpServers ??
          (await environment.mcpServers({ configFiles: undefined, servers: undefined, strict: undefined })));
  } catch (error) {
    // This host cannot run it (its settings, its endpoint): the items' report is still written.
    const why = error instanceof Error ? error.message : String(error);
    log(`reduce: not run here: ${why}`);
    return why;
  }
  const dir = batchDir(run.state, spec.id);
  const mcp =
    servers === undefined
      ? undefined
      : environment.mcpOnDemand(servers, { resultsDir: join(dir, "mcp-results") });
  const pool = createBatchPool(source, 1, undefined);
  const leaseMs = run.reduceLeaseMs ?? DEFAULT_REDUCE_LEASE_MS;
  try {
    const { tools, problems, have } =
      mcp === undefined ? { tools: [], problems: [], have: "" } : await namedMcpTools(done.mcpServers, mcp);
    if (problems.length > 0) {
      const why = `the batch's MCP servers cannot be had on this host: ${problems.join("; ")} (it has: ${have}); configure each under that name here — the project's .mcp.json (trusted) or settings' mcpServers`;
      log(`reduce: not run here: ${why}`);
      return why;
    }
    return await runReduceStep({
      spec: { ...spec, reduce: prompt },
      dir,
      states: summary.states,
      source,
      settings: environment.settings,
      bash: environment.bash(spec.permissionMode, sandbox, true),
      mcpTools: tools,
      pool,
      signal,
      log,
      mirror: {
        read: async () => {
          const text = await readReduceRecord(connection, spec.id);
          return text === null ? undefined : parseReduceRecord(text);
        },
        write: (record) => writeReduceRecord(connection, spec.id, JSON.stringify(record)),
        claim: () => claimLease(connection, spec.id, leaseMs),
        pollMs: Math.min(500, Math.max(25, Math.floor(leaseMs / 10))),
      },
    });
  } finally {
    await pool.close();
    await mcp?.close();
  }
}

/** The producer saw the batch through (not interrupted, not lost) and every item has its outcome. */
function everySettled(summary: QueuedRunSummary): boolean {
  return (
    !summary.interrupted &&
    !summary.lost &&
    summary.states.every((state) => state.status === "succeeded" || state.status === "failed")
  );
}

/** How long a producer's claim on the reduce outlives its last renewal (kill -9 → the next runs it). */
const DEFAULT_REDUCE_LEASE_MS = 30_000;

/** `FORKLOOP_QUEUE_REDUCE_LEASE_MS` (R-B7): the producer's claim on the reduce, in ms. */
export function reduceLeaseFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  const ms = msFromEnv(
    env.FORKLOOP_QUEUE_REDUCE_LEASE_MS,
    "FORKLOOP_QUEUE_REDUCE_LEASE_MS",
    DEFAULT_REDUCE_LEASE_MS,
  );
  return Math.max(ms, 300);
}

/**
 * R-B7, R-B1: this producer's claim on running the batch's reduce (`SET NX PX`), renewed every
 * third of `ttlMs` while held; `lost` is aborted when a renewal finds it gone. Undefined while
 * another producer holds it.
 */
async function claimLease(
  connection: Redis,
  batchId: string,
  ttlMs: number,
): Promise<ReduceLease | undefined> {
  const token = randomUUID();
  if (!(await claimReduceLease(connection, batchId, token, ttlMs))) return undefined;
  const lost = new AbortController();
  const timer = setInterval(
    () => {
      renewReduceLease(connection, batchId, token, ttlMs).then(
        (held) => {
          if (!held) lost.abort();
        },
        // Redis away for a moment: the next renewal tries again; the lease expires if it stays away.
        () => undefined,
      );
    },
    Math.max(1, Math.floor(ttlMs / 3)),
  );
  timer.unref();
  return {
    lost: lost.signal,
    release: async () => {
      clearInterval(timer);
      await releaseReduceLease(connection, batchId, token).catch(() => undefined);
    },
  };
}

/**
 * R-B4: `--retry-conflicts` begins a retry round (journaled here first: it supersedes the items'
 * conflicts once), and the journal's last round is put on the queue unless Redis has it already —
 * a producer killed between the two is finished by the next re-attach, with or without the flag.
 */
async function retryConflicts(
  run: QueuedBatchRun,
  queued: {
    readonly batch: QueuedBatch;
    readonly items: readonly JobItem[];
    readonly connection: Redis;
    readonly traceparent: string | undefined;
  },
  applier: QueuedApplier | undefined,
  line: (text: string) => void,
): Promise<void> {
  const { spec } = queued.batch;
  if (run.retryConflicts && applier === undefined) {
    line(
      `forkloop batch ${spec.id}: --retry-conflicts: its items are not isolated, so none has a conflict to retry.`,
    );
    return;
  }
  if (applier === undefined) return;
  const begun = run.retryConflicts ? await applier.retryConflicts() : undefined;
  if (run.retryConflicts && begun === undefined)
    line(`forkloop batch ${spec.id}: --retry-conflicts: no item has a conflict to retry.`);
  const round = begun ?? applier.lastRetry();
  if (round === undefined) return;
  if (begun !== undefined) {
    line(
      `forkloop batch ${spec.id}: retrying ${plural(begun.ids.length, "item")} (--retry-conflicts) on its workers from ${spec.cwd} as it is now (commit ${begun.base.slice(0, 12)}, the changes applied since included; a worker in another checkout fetches it: git fetch <this checkout> refs/forkloop/batch-bases/${spec.id}); the other items are left as they are.`,
    );
  }
  const byId = new Map(queued.items.map((item) => [item.id, item]));
  const items = round.ids.flatMap((id) => byId.get(id) ?? []);
  await enqueueRetryRound(
    queued.connection,
    queued.batch,
    { round: round.round, base: round.base, items },
    queued.traceparent,
  );
}

/**
 * R-B2: an isolated batch's applier on this host (its journal in the batch's directory, pending
 * applies of a killed producer finished first), said once; undefined when items are not isolated.
 */
async function openApplier(
  run: QueuedBatchRun,
  batch: QueuedBatch,
  connection: Redis,
  line: (text: string) => void,
): Promise<QueuedApplier | undefined> {
  const base = batch.isolation?.base;
  if (base === undefined) return undefined;
  const { spec } = batch;
  const dir = batchDir(run.state, spec.id);
  const isolation = await openWorkspaceIsolation({ cwd: spec.cwd, batchDir: dir, commit: base });
  line(
    `forkloop batch ${spec.id}: items are isolated (--isolate): each runs on its worker in a git worktree of ${base.slice(0, 12)}; a succeeded item's change is merged into ${isolation.root} here once, a change that overlaps another is kept aside as a conflict.`,
  );
  return openQueuedApplier({
    dir,
    isolation,
    retry: `forkloop batch --resume ${spec.id} --queue ${spec.queue} --retry-conflicts`,
    readChange: (itemId) => readChange(connection, spec.id, itemId),
    ...(run.home === undefined ? {} : { home: run.home }),
  });
}

/**
 * R-B2: the commit a new isolated queued batch's items start from — the checkout's last commit,
 * which every worker's checkout must have. Refused (exit 2, naming the fix) outside git, without
 * a commit, or with uncommitted changes (they would be in no item's worktree).
 */
async function isolationBase(cwd: string, stateDirs: readonly string[]): Promise<string> {
  const head = await git(cwd, ["rev-parse", "--verify", "HEAD^{commit}"]);
  if (head.code !== 0)
    throw new BatchError(
      "invalid_batch",
      `--isolate with --queue needs a git repository with a commit: each worker runs an item in a worktree of that commit in its own checkout, and ${cwd} has none. Commit the project (git init && git add -A && git commit -m base), or drop --isolate.`,
    );
  await refuseDirtyTree(cwd, stateDirs);
  return head.stdout.toString("utf8").trim();
}

async function createQueued(
  run: QueuedBatchRun,
  { plan, mcpServers }: Extract<QueueTarget, { kind: "new" }>,
  connection: Redis,
  url: string,
): Promise<{ batch: QueuedBatch; items: readonly JobItem[] }> {
  // Before any state exists: a refused --isolate leaves nothing behind.
  const base = run.isolate
    ? await isolationBase(plan.spec.cwd, [run.state.dir, ...run.state.legacyDirs])
    : undefined;
  const { spec, dir, items } = await createPlannedBatch(
    { ...plan, spec: { ...plan.spec, queue: url } },
    run.state,
    run.output !== undefined,
  );
  const batch: QueuedBatch = {
    spec,
    attempts: run.attempts ?? 3,
    backoffMs: run.retryDelayMs ?? 1_000,
    ...(run.rpm === undefined ? {} : { rpm: run.rpm }),
    ...(mcpServers.length === 0 ? {} : { mcpServers: [...mcpServers] }),
    ...(base === undefined ? {} : { isolation: { base } }),
  };
  // Just created by createPlannedBatch: nothing of it ran, so a refusal leaves nothing behind.
  const registered = await registerBatch(connection, batch, items).catch(async (error: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw error;
  });
  if (registered.kind === "conflict") {
    await rm(dir, { recursive: true, force: true });
    throw new BatchError(
      "invalid_batch",
      `batch ${spec.id} already exists on ${url} with other settings (${registered.differences.join(", ")} differ). Re-attach with \`forkloop batch --resume ${spec.id} --queue ${url}\`, or pick another --id.`,
    );
  }
  return { batch: registered.kind === "same" ? { ...registered.existing, spec } : batch, items };
}

/**
 * Any host: the batch's settings and items come from Redis; results go to this host's batch
 * directory in the project's state (or `--output DIR`), checked writable first.
 */
async function attachQueued(
  run: QueuedBatchRun,
  id: string,
  connection: Redis,
  url: string,
): Promise<{ batch: QueuedBatch; items: readonly JobItem[] }> {
  const stored = await loadQueuedBatch(connection, id);
  if (!stored) {
    throw new BatchError(
      "invalid_batch",
      `no batch "${id}" on ${url}. Check the id and the URL; batch ids are printed when a batch starts.`,
    );
  }
  const dir = batchDir(run.state, id);
  const sameHost = stored.batch.spec.cwd === run.cwd;
  const outputDir =
    run.output !== undefined ? resolve(run.cwd, run.output) : sameHost ? stored.batch.spec.outputDir : dir;
  const spec: BatchSpec = { ...stored.batch.spec, cwd: run.cwd, outputDir, queue: url };
  await checkWritableDir(batchesDir(run.state), {
    role: "batch state directory",
    fix: "Batches keep their state there; set FORKLOOP_HOME or --state-dir to a writable directory.",
  });
  if (outputDir !== dir) {
    await checkWritableDir(outputDir, {
      role: "output directory",
      fix: "results.jsonl and the report go there: give a writable --output DIR.",
    });
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await saveBatchSpec(dir, spec);
  return { batch: { ...stored.batch, spec }, items: stored.items };
}
