import { executeQueuedBatch, type QueueTarget } from "@forkloop/batch";
import {
  describeQueuedOutcome,
  formatBatchSummary,
  queuedRunRefusal,
  reduceLeaseFromEnv,
} from "@forkloop/batch/internal";
import type { ProjectState, ResolvedMcpServers, RunEnvironment } from "@forkloop/sdk";
import type { SandboxMode } from "@forkloop/tools";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT_FOR_BATCH_STATUS, type ExitCode } from "../exit-codes.js";

/** The flags `forkloop batch --queue` reads beyond the batch's own settings. */
export interface QueueFlags {
  readonly queue: string;
  /** The project directory as given: named again in the re-attach command. */
  readonly cwd?: string | undefined;
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
  /** R-B7: how the reduce's Bash runs on this host (the producer runs the reduce). */
  readonly sandbox?: SandboxMode | undefined;
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
  where: {
    readonly cwd: string;
    readonly state: ProjectState;
    readonly run: RunEnvironment;
    /** A new batch's MCP servers as this host resolved them (`--mcp-config`): the reduce's. */
    readonly servers?: ResolvedMcpServers;
  },
  context: CommandContext,
): Promise<ExitCode> {
  const refusal = queuedRunRefusal(flags, target.kind === "attach" ? target.id : undefined);
  if (refusal !== undefined) throw new CliError(refusal.message);
  const outcome = await executeQueuedBatch(
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
      // R-B7: a --reduce batch's reduce runs here, after every worker's items.
      reducer: { environment: where.run, sandbox: flags.sandbox, mcpServers: where.servers },
      reduceLeaseMs: reduceLeaseFromEnv(context.env),
    },
    context,
  );
  const { status, notices } = describeQueuedOutcome(outcome, { cwd: flags.cwd });
  for (const notice of notices) context.stderr.write(`${notice}\n`);
  const { report, paths } = outcome;
  context.stdout.write(
    formatBatchSummary({ report, paths, status, json: flags["output-format"] === "json" }),
  );
  return EXIT_FOR_BATCH_STATUS[status];
}
