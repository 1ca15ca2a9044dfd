import { mkdir, rm } from "node:fs/promises";
import { resolve } from "node:path";
import {
  type BatchPlan,
  type BatchSpec,
  batchDir,
  checkWritableDir,
  type connectQueue,
  createPlannedBatch,
  describeRedisError,
  enqueueOnce,
  finalSnapshot,
  formatDuration,
  isRedisError,
  type JobItem,
  loadQueuedBatch,
  openQueue,
  openQueueLedger,
  ProgressDisplay,
  parseQueueUrl,
  plural,
  type QueuedBatch,
  type QueuedMcpServer,
  queuedBatchReport,
  registerBatch,
  reportWriteFailed,
  runQueuedBatch,
  saveBatchSpec,
  startBatchSpan,
  writeReport,
} from "@forkloop/batch";
import { batchesDir, type ProjectState } from "@forkloop/sdk";
import { permissionModeFacts } from "@forkloop/tools";
import { finishedStatus, printBatchSummary } from "../batch-summary.js";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode, exitCodeForBatch } from "../exit-codes.js";

/** The flags `forkloop batch --queue` reads beyond the batch's own settings. */
export interface QueueFlags {
  readonly queue: string;
  readonly attempts?: number | undefined;
  readonly "retry-delay"?: number | undefined;
  readonly output?: string | undefined;
  readonly "output-format"?: "text" | "json" | undefined;
  /** R-B1: model requests per minute across every worker, stored with the batch. */
  readonly rpm?: number | undefined;
  /** Flags that belong to `forkloop worker` or the local journal, refused here. */
  readonly concurrency?: number | undefined;
  readonly "no-warm"?: boolean | undefined;
  readonly "retry-failed"?: boolean | undefined;
  readonly repair?: boolean | undefined;
}

/** A new batch (its items listed, nothing written yet), or one already on the queue. */
export type QueueTarget =
  | {
      readonly kind: "new";
      readonly plan: Extract<BatchPlan, { kind: "new" }>;
      /** The MCP servers its items may use, by name: each worker starts its own (R-M1). */
      readonly mcpServers: readonly QueuedMcpServer[];
    }
  | { readonly kind: "attach"; readonly id: string };

/**
 * `forkloop batch --queue URL` (R-B1): the batch goes to Redis as a BullMQ flow and
 * `forkloop worker` processes on any host run it; this process shows the whole batch's progress
 * and writes results.jsonl and the report (the same files as a local batch) when it completes.
 * `--resume ID --queue URL` re-attaches from any host. The batch's state directory is the
 * project's (`--state-dir`, `$FORKLOOP_HOME`), its batch.json names the queue so
 * `forkloop batch list` and `status` know where the items are.
 */
export async function queuedBatchCommand(
  flags: QueueFlags,
  target: QueueTarget,
  where: { readonly cwd: string; readonly state: ProjectState },
  context: CommandContext,
): Promise<ExitCode> {
  const misplaced = (["concurrency", "no-warm", "retry-failed", "repair"] as const).filter(
    (f) => flags[f] !== undefined,
  );
  if (misplaced.length > 0) {
    throw new CliError(
      `with --queue the items run in \`forkloop worker\` processes: drop ${misplaced.map((f) => `--${f}`).join(", ")} (give a worker --concurrency N instead).`,
    );
  }
  if (target.kind === "attach" && flags.rpm !== undefined) {
    throw new CliError(
      `--rpm is kept with the batch when it is enqueued; drop it to re-attach with --resume ${target.id}.`,
    );
  }
  // The URL and Redis are checked before any state exists, so a typo leaves nothing behind.
  const address = parseQueueUrl(flags.queue);
  const connection = await openQueue(address, (line) => context.stderr.write(`${line}\n`));
  try {
    const { batch, items } =
      target.kind === "new"
        ? await createQueued(flags, target, where.state, connection, address.display)
        : await attachQueued(flags, target.id, where, connection, address.display);
    const spec = batch.spec;
    // R-B1: the same enqueue-once as a local batch, on the queue's ledger. A re-attach
    // adds the flow again only if the seal says its first add never finished.
    // R-V5: the batch's span; its trace context goes to the workers in each item's job data.
    const batchSpan = startBatchSpan(spec.id, "queue");
    const ledger = openQueueLedger(connection, batch, address.display, batchSpan?.traceparent);
    await enqueueOnce(ledger, target.kind === "new" ? items : undefined, {
      relist: { description: "the items stored with the batch", list: async () => items },
      repair: false,
      notice: (line) => context.stderr.write(`${line}\n`),
    });
    const started = target.kind === "attach" ? (await ledger.interrupted()).length : 0;
    const display = new ProgressDisplay(context.stderr);
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
    context.stderr.write(
      `forkloop batch ${spec.id}: ${plural(items.length, "item")} on ${address.display}${attached}${limit}${servers} · run them with \`forkloop worker --queue ${address.display}\` · results in ${spec.outputDir}\n`,
    );
    if (permissionModeFacts(spec.permissionMode).dangerous) {
      // R-B1 (trust): a worker runs a bypass batch only if its operator opted in.
      context.stderr.write(
        `forkloop batch ${spec.id}: bypassPermissions: only workers started with \`forkloop worker --allow-dangerously-skip-permissions\` run its items; any other worker fails them\n`,
      );
    }
    const summary = await runQueuedBatch({
      connection,
      batch,
      signal: context.signal,
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
    });
    batchSpan?.end(summary.lost ? { error: "the batch is gone from Redis" } : "ok", {
      "forkloop.batch.items.succeeded": summary.states.filter((state) => state.status === "succeeded").length,
      "forkloop.batch.items.failed": summary.states.filter((state) => state.status === "failed").length,
    });
    // Transcripts stay on the host whose worker ran the item: the report names none.
    const report = queuedBatchReport(spec.id, summary, address.display);
    display.finish(finalSnapshot(report));
    const paths = await writeReport(spec.outputDir, report).catch((error: unknown) => {
      throw reportWriteFailed(error, spec);
    });
    let code = exitCodeForBatch(report.totals);
    const status = summary.interrupted ? "interrupted" : finishedStatus(code);
    if (summary.lost) {
      context.stderr.write(
        `batch ${spec.id} was lost from Redis at ${address.display} with ${plural(report.totals.pending, "item")} unfinished; the ${plural(report.totals.succeeded + report.totals.failed, "result")} received are in ${paths.results}. Make Redis keep its data (appendonly yes), then run the unfinished items as a new batch.\n`,
      );
    }
    if (summary.interrupted) {
      context.stderr.write(
        `interrupted: the workers go on; re-attach with \`forkloop batch --resume ${spec.id} --queue ${address.display}\`\n`,
      );
      code = EXIT.interrupted;
    }
    printBatchSummary({ report, paths, status, json: flags["output-format"] === "json" }, context);
    return code;
  } catch (error) {
    // R-R10: OOM, READONLY, NOAUTH… mid-run are one line naming the fix, not a stack trace.
    if (isRedisError(error)) throw new CliError(describeRedisError(error, address.display));
    throw error;
  } finally {
    connection.disconnect();
  }
}

type Redis = Awaited<ReturnType<typeof connectQueue>>;

async function createQueued(
  flags: QueueFlags,
  { plan, mcpServers }: Extract<QueueTarget, { kind: "new" }>,
  state: ProjectState,
  connection: Redis,
  url: string,
): Promise<{ batch: QueuedBatch; items: readonly JobItem[] }> {
  const { spec, dir, items } = await createPlannedBatch(
    { ...plan, spec: { ...plan.spec, queue: url } },
    state,
    flags.output !== undefined,
  );
  const batch: QueuedBatch = {
    spec,
    attempts: flags.attempts ?? 3,
    backoffMs: flags["retry-delay"] ?? 1_000,
    ...(flags.rpm === undefined ? {} : { rpm: flags.rpm }),
    ...(mcpServers.length === 0 ? {} : { mcpServers: [...mcpServers] }),
  };
  // Just created by createPlannedBatch: nothing of it ran, so a refusal leaves nothing behind.
  const registered = await registerBatch(connection, batch, items).catch(async (error: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw error;
  });
  if (registered.kind === "conflict") {
    await rm(dir, { recursive: true, force: true });
    throw new CliError(
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
  flags: QueueFlags,
  id: string,
  where: { readonly cwd: string; readonly state: ProjectState },
  connection: Redis,
  url: string,
): Promise<{ batch: QueuedBatch; items: readonly JobItem[] }> {
  const stored = await loadQueuedBatch(connection, id);
  if (!stored) {
    throw new CliError(
      `no batch "${id}" on ${url}. Check the id and the URL; batch ids are printed when a batch starts.`,
    );
  }
  const dir = batchDir(where.state, id);
  const sameHost = stored.batch.spec.cwd === where.cwd;
  const outputDir =
    flags.output !== undefined
      ? resolve(where.cwd, flags.output)
      : sameHost
        ? stored.batch.spec.outputDir
        : dir;
  const spec: BatchSpec = { ...stored.batch.spec, cwd: where.cwd, outputDir, queue: url };
  await checkWritableDir(batchesDir(where.state), {
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
