import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type BatchSpec,
  batchDir,
  buildReport,
  connectQueue,
  finalSnapshot,
  formatDuration,
  formatTotals,
  type JobItem,
  loadQueuedBatch,
  ProgressDisplay,
  parseQueueUrl,
  plural,
  type QueuedBatch,
  QueueUnreachableError,
  registerBatch,
  runQueuedBatch,
  writeReport,
} from "@forkloop/batch";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode, exitCodeForBatch } from "../exit-codes.js";

/** The flags `forkloop batch --queue` reads beyond the batch's own settings. */
export interface QueueFlags {
  readonly queue: string;
  readonly resume?: string | undefined;
  readonly attempts?: number | undefined;
  readonly "retry-delay"?: number | undefined;
  /** Flags that belong to `forkloop worker` or the local journal, refused here. */
  readonly concurrency?: number | undefined;
  readonly "no-warm"?: boolean | undefined;
  readonly "retry-failed"?: boolean | undefined;
}

/**
 * `forkloop batch --queue URL` (issue 16): the batch goes to Redis as a BullMQ flow and
 * `forkloop worker` processes on any host run it; this process shows the whole batch's progress
 * and writes results.jsonl and the report (the same files as a local batch) when it completes.
 * `--resume ID --queue URL` re-attaches from any host.
 */
export async function queuedBatchCommand(
  flags: QueueFlags,
  cwd: string,
  context: CommandContext,
  prepareNew: () => Promise<{ spec: BatchSpec; dir: string; items?: readonly JobItem[] }>,
): Promise<ExitCode> {
  const misplaced = (["concurrency", "no-warm", "retry-failed"] as const).filter(
    (f) => flags[f] !== undefined,
  );
  if (misplaced.length > 0) {
    throw new CliError(
      `with --queue the items run in \`forkloop worker\` processes: drop ${misplaced.map((f) => `--${f}`).join(", ")} (give a worker --concurrency N instead).`,
    );
  }
  // The URL and Redis are checked before any state exists, so a typo leaves nothing behind.
  const address = parseQueueUrl(flags.queue);
  const connection = await connectQueue(address).catch((error: unknown) => {
    throw error instanceof QueueUnreachableError ? new CliError(error.message) : error;
  });
  try {
    const { batch, items } =
      flags.resume === undefined
        ? await createQueued(flags, connection, address.display, prepareNew)
        : await attachQueued(flags.resume, cwd, connection, address.display);
    const spec = batch.spec;
    const display = new ProgressDisplay(context.stderr);
    context.stderr.write(
      `forkloop batch ${spec.id}: ${plural(items.length, "item")} on ${address.display}${flags.resume ? " (re-attached)" : ""} · run them with \`forkloop worker --queue ${address.display}\` · results in ${spec.outputDir}\n`,
    );
    const summary = await runQueuedBatch({
      connection,
      batch,
      items,
      signal: context.signal,
      onEvent(event) {
        if (event.type === "progress") display.update(event.snapshot);
        else if (event.type === "redis_error") display.log(`redis ${address.display}: ${event.message}`);
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
    const report = buildReport(spec.id, summary.states, summary.wallMs);
    const reRun = summary.states.filter((state) => state.attempts > 1).length;
    display.finish(finalSnapshot(report));
    const paths = await writeReport(spec.outputDir, {
      ...report,
      queue: {
        url: address.display,
        reExecutedItems: reRun,
        duplicateExecutions: summary.duplicateExecutions,
      },
    });
    context.stdout.write(
      `${formatTotals(report)}\nqueue: ${plural(reRun, "item")} ran more than once · ${plural(summary.duplicateExecutions, "duplicate completion")} dropped\nresults: ${paths.results}\nreport:  ${paths.markdown}\n`,
    );
    if (summary.interrupted) {
      context.stderr.write(
        `interrupted: the workers go on; re-attach with \`forkloop batch --resume ${spec.id} --queue ${address.display}\`\n`,
      );
      return EXIT.interrupted;
    }
    return exitCodeForBatch(report.totals);
  } finally {
    connection.disconnect();
  }
}

type Redis = Awaited<ReturnType<typeof connectQueue>>;

async function createQueued(
  flags: QueueFlags,
  connection: Redis,
  url: string,
  prepareNew: () => Promise<{ spec: BatchSpec; dir: string; items?: readonly JobItem[] }>,
): Promise<{ batch: QueuedBatch; items: readonly JobItem[] }> {
  const { spec, dir, items = [] } = await prepareNew();
  const batch: QueuedBatch = {
    spec,
    attempts: flags.attempts ?? 3,
    backoffMs: flags["retry-delay"] ?? 1_000,
  };
  const registered = await registerBatch(connection, batch, items);
  if (registered.kind === "conflict") {
    await rm(dir, { recursive: true, force: true }); // just created by prepareNew: nothing of it ran
    throw new CliError(
      `batch ${spec.id} already exists on ${url} with other settings (${registered.differences.join(", ")} differ). Re-attach with \`forkloop batch --resume ${spec.id} --queue ${url}\`, or pick another --id.`,
    );
  }
  return { batch: registered.kind === "same" ? { ...registered.existing, spec } : batch, items };
}

/** Any host: the batch's settings and items come from Redis; results go to this host's batch dir. */
async function attachQueued(
  id: string,
  cwd: string,
  connection: Redis,
  url: string,
): Promise<{ batch: QueuedBatch; items: readonly JobItem[] }> {
  const dir = batchDir(cwd, id);
  const stored = await loadQueuedBatch(connection, id);
  if (!stored) {
    throw new CliError(
      `no batch "${id}" on ${url}. Check the id and the URL; batch ids are printed when a batch starts.`,
    );
  }
  const sameHost = stored.batch.spec.cwd === cwd;
  const spec: BatchSpec = sameHost ? stored.batch.spec : { ...stored.batch.spec, cwd, outputDir: dir };
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "batch.json"), `${JSON.stringify(spec, null, 2)}\n`);
  return { batch: { ...stored.batch, spec }, items: stored.items };
}
