import { resolve } from "node:path";
import {
  type BatchComposition,
  type BatchSpec,
  batchModeRefusal,
  type DryRunEstimate,
  formatDryRun,
  type LocalBatchOutcome,
  parseQueueUrl,
  prepareLocalBatch,
  prepareQueuedBatch,
  queueReattachRefusal,
  resumableBatch,
  runLocalBatch,
} from "@forkloop/batch";
import { describeLocalOutcome, formatBatchSummary } from "@forkloop/batch/internal";
import {
  checkProjectDir,
  type LoopChoices,
  type ProjectState,
  projectState,
  type RunEnvironment,
  resolveLoopChoices,
  resolveRunEnvironment,
} from "@forkloop/sdk";
import { SETTING_SOURCES } from "@forkloop/tools";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, EXIT_FOR_BATCH_STATUS, type ExitCode } from "../exit-codes.js";
import type { GivenFlags } from "../flags.js";
import { loopChoicesFromFlags } from "../loop-flags.js";
import { timeoutEnv } from "../model-timeouts.js";
import { BATCH_FLAG_READER, BATCH_USAGE, type BatchFlags, parseBatchFlags } from "./batch-flags.js";
import { batchListCommand } from "./batch-list.js";
import { queuedBatchCommand } from "./batch-queue.js";
import { reportHint, writeBatchHtml } from "./report.js";

export { BATCH_USAGE };

type RunSettings = RunEnvironment["settings"];

/** Where a batch runs: the project, its state, its run environment and the flags as given. */
interface BatchWhere {
  readonly cwd: string;
  readonly state: ProjectState;
  readonly run: RunEnvironment;
  readonly given: GivenFlags;
}

export async function batchCommand(argv: readonly string[], context: CommandContext): Promise<ExitCode> {
  const { flags: typed, positionals, given } = parseBatchFlags(argv);
  if (typed.help) {
    context.stdout.write(`${BATCH_USAGE}\n`);
    return EXIT.ok;
  }
  const [action, id, ...extra] = positionals;
  if ((action === "list" && id === undefined) || (action === "status" && extra.length === 0)) {
    const cwd = await checkProjectDir(resolve(context.cwd, typed.cwd ?? "."));
    const state = projectStateFor(cwd, typed, context);
    return batchListCommand(action, id, { state, json: typed["output-format"] === "json" }, context);
  }
  if (positionals.length > 0) {
    throw new CliError(
      `forkloop batch takes no arguments but \`list\` and \`status ID\` (got "${positionals.join(" ")}"); put the prompt in --prompt.\n\n${BATCH_USAGE}`,
    );
  }
  const cwd = await checkProjectDir(resolve(context.cwd, typed.cwd ?? "."));
  const state = projectStateFor(cwd, typed, context);
  // R-R7: a local resume runs with every setting the batch started with (batch.json), its own over them.
  const resume =
    typed.resume !== undefined && typed.queue === undefined
      ? composed(await resumableBatch({ state, flags: typed, given, reader: BATCH_FLAG_READER }))
      : undefined;
  const flags = resume?.flags ?? typed;
  if (resume !== undefined && resume.unused.length > 0) {
    context.stderr.write(
      `forkloop batch ${typed.resume}: its state is inside the checkout, so it is not resumed with its stored ${resume.unused.join(", ")} (a repository can rewrite it); give ${resume.unused.length === 1 ? "it" : "them"} again with --resume to use ${resume.unused.length === 1 ? "it" : "them"}\n`,
    );
  }
  // Settings first: a bad settings file must fail (exit 2) before any state or server exists.
  const run = await resolveRunEnvironment({
    cwd,
    env: context.env,
    settingSources: SETTING_SOURCES,
    trustProject: flags["trust-project"] === true,
    warn: (line) => context.stderr.write(`${line}\n`),
  });
  // R-B1: what only a local or only a queued batch can do, before Redis is contacted.
  const mode = batchModeRefusal(flags);
  if (mode !== undefined) throw new CliError(mode.message);
  if (flags.queue !== undefined) {
    try {
      return await queuedBatch(flags, flags.queue, { cwd, state, run, given }, context);
    } finally {
      // What the producer's reduce started on this host (its endpoint, MCP servers), if it left any.
      await run.close();
    }
  }
  // R-M1: a bad MCP config, like bad settings, fails before a new batch's state exists.
  const { plan, servers, bash, estimate } = composed(
    await prepareLocalBatch({
      ...preparation(flags, { cwd, state, run, given }, context),
      stored: resume?.stored,
    }),
  );
  if (flags["dry-run"] && estimate !== undefined) return printDryRun(estimate, flags, context);
  try {
    const outcome = await runLocalBatch(
      {
        plan,
        state,
        environment: run,
        bash,
        servers,
        outputGiven: flags.output !== undefined,
        isolate: flags.isolate,
        noIsolate: flags["no-isolate"],
        retryFailed: flags["retry-failed"],
        retryConflicts: flags["retry-conflicts"],
        repair: flags.repair,
        concurrency: flags.concurrency,
        api: flags.api,
        warm: !flags["no-warm"],
        limitUsd: flags["max-budget-usd"],
        firstRequestsEstimate: estimate && {
          costUsd: estimate.firstRequestsCostUsd,
          items: estimate.items.length,
        },
        // R-R2: deadlines from the flags, over the environment, over the settings' env map.
        endpointEnv: timeoutEnv(flags),
      },
      context,
    );
    return await printOutcome(outcome, flags, context);
  } finally {
    // The MCP servers and the endpoint it started.
    await run.close();
  }
}

/** How a local batch ended, on stderr, then its summary; the exit code says the same (R-R9, R-B7). */
async function printOutcome(
  outcome: LocalBatchOutcome,
  flags: BatchFlags,
  context: CommandContext,
): Promise<ExitCode> {
  const { spec, dir, report, paths } = outcome;
  const resume = resumeCommand(spec, flags);
  const { status, notices } = describeLocalOutcome(outcome, { resume, limitUsd: flags["max-budget-usd"] });
  for (const notice of notices) context.stderr.write(`${notice}\n`);
  const html = await htmlReportLine(spec, dir, flags);
  const json = flags["output-format"] === "json";
  context.stdout.write(formatBatchSummary({ report, paths, html, status, json, resume }));
  return EXIT_FOR_BATCH_STATUS[status];
}

/**
 * `--queue URL` (R-B1): the items run in `forkloop worker` processes. The flags, the items
 * and a dry run are checked and answered here as for a local batch, before Redis is contacted
 * (what only a local batch can do was refused by `batchModeRefusal`).
 */
async function queuedBatch(
  flags: BatchFlags,
  url: string,
  where: BatchWhere,
  context: CommandContext,
): Promise<ExitCode> {
  parseQueueUrl(url); // a typo is exit 2 before anything else, the dry run included
  // The URL as given: its password reaches Redis; messages and batch.json use it without one.
  const queueFlags = { ...flags, queue: url };
  if (flags.resume !== undefined) {
    const refusal = queueReattachRefusal(flags.resume, flags);
    if (refusal !== undefined) throw new CliError(refusal.message);
    return queuedBatchCommand(queueFlags, { kind: "attach", id: flags.resume }, where, context);
  }
  // R-M1, R-B1: a bad MCP config is exit 2 now; only the servers' names go to Redis.
  const { plan, mcpServers, servers, estimate } = composed(
    await prepareQueuedBatch({ ...preparation(flags, where, context), dryRun: flags["dry-run"] === true }),
  );
  if (estimate !== undefined) return printDryRun(estimate, flags, context);
  return queuedBatchCommand(queueFlags, { kind: "new", plan, mcpServers }, { ...where, servers }, context);
}

/** A composition the flags do not make is exit 2, in the library's words (the usage after them when it says so). */
function composed<T>(composition: BatchComposition<T>): T {
  if (composition.ok) return composition.value;
  const { message, data } = composition.error;
  throw new CliError(data?.usage === true ? `${message}\n\n${BATCH_USAGE}` : message);
}

/** The command that resumes this batch, as typed where this one was. */
function resumeCommand(spec: BatchSpec, flags: BatchFlags): string {
  return `forkloop batch --resume ${spec.id}${flags.cwd ? ` --cwd ${flags.cwd}` : ""}`;
}

function printDryRun(estimate: DryRunEstimate, flags: BatchFlags, context: CommandContext): ExitCode {
  context.stdout.write(
    flags["output-format"] === "json"
      ? `${JSON.stringify({ type: "batch_dry_run", ...estimate })}\n`
      : `${formatDryRun(estimate)}\n`,
  );
  return EXIT.ok;
}

/** R-V1: report.html's path with `--report`, else the command that writes and opens it. */
async function htmlReportLine(spec: BatchSpec, dir: string, flags: BatchFlags): Promise<string> {
  if (!flags.report) return reportHint(spec.id, flags);
  try {
    return await writeBatchHtml(spec, dir);
  } catch (error) {
    return `not written (${(error as Error).message}); try ${reportHint(spec.id, flags)}`;
  }
}

function projectStateFor(cwd: string, flags: BatchFlags, context: CommandContext) {
  return projectState({
    cwd,
    env: context.env,
    ...(flags["state-dir"] === undefined ? {} : { stateDir: flags["state-dir"] }),
  });
}

/** Thinking, the summary model and context editing — the flags, then the settings. */
function loopChoices(flags: BatchFlags, settings: RunSettings, context: CommandContext): LoopChoices {
  return resolveLoopChoices(loopChoicesFromFlags(flags, context.env), settings);
}

/** What a batch is prepared from (@forkloop/batch): the flags, the project, its run environment; notices to stderr. */
function preparation(flags: BatchFlags, where: BatchWhere, context: CommandContext) {
  return {
    flags,
    cwd: where.cwd,
    state: where.state,
    environment: where.run,
    loop: () => loopChoices(flags, where.run.settings, context),
    given: where.given,
    reader: BATCH_FLAG_READER,
    host: { env: context.env, warn: (line: string) => context.stderr.write(`${line}\n`) },
  };
}
