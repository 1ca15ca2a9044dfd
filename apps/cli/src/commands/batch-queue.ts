import { executeQueuedBatch, plural, type QueueTarget } from "@forkloop/batch";
import type { ProjectState } from "@forkloop/sdk";
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
  /** R-B2: items run in worktrees on their workers; their changes are applied here once. */
  readonly isolate?: boolean | undefined;
  /** R-B4 (a re-attach): conflicted items run again on their workers from this tree as it is now. */
  readonly "retry-conflicts"?: boolean | undefined;
  /** Flags that belong to `forkloop worker` or the local journal, refused here. */
  readonly concurrency?: number | undefined;
  readonly "no-warm"?: boolean | undefined;
  readonly "retry-failed"?: boolean | undefined;
  readonly repair?: boolean | undefined;
}

/**
 * `forkloop batch --queue URL` (R-B1): the flags only a local batch or a worker takes are refused,
 * `executeQueuedBatch` (@forkloop/batch) enqueues or re-attaches and writes the report, and this
 * prints how it ended.
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
  const { spec, summary, report, paths, queue } = await executeQueuedBatch(
    {
      url: flags.queue,
      target,
      cwd: where.cwd,
      state: where.state,
      output: flags.output,
      attempts: flags.attempts,
      retryDelayMs: flags["retry-delay"],
      rpm: flags.rpm,
      isolate: flags.isolate,
      home: context.env.HOME,
      retryConflicts: flags["retry-conflicts"],
    },
    context,
  );
  let code = exitCodeForBatch(report.totals);
  const status = summary.interrupted ? "interrupted" : finishedStatus(code);
  if (summary.lost) {
    context.stderr.write(
      `batch ${spec.id} was lost from Redis at ${queue} with ${plural(report.totals.pending, "item")} unfinished; the ${plural(report.totals.succeeded + report.totals.failed, "result")} received are in ${paths.results}. Make Redis keep its data (appendonly yes), then run the unfinished items as a new batch.\n`,
    );
  }
  if (summary.interrupted) {
    context.stderr.write(
      `interrupted: the workers go on; re-attach with \`forkloop batch --resume ${spec.id} --queue ${queue}\`\n`,
    );
    code = EXIT.interrupted;
  }
  printBatchSummary({ report, paths, status, json: flags["output-format"] === "json" }, context);
  return code;
}
