import { join } from "node:path";
import type { SubAgentBashOptions } from "@forkloop/orchestrator";
import type { ProjectState, ResolvedMcpServers, RunEnvironment } from "@forkloop/sdk";
import { LogWriteError } from "./append-log.js";
import { enqueueOnce, relistFromSource } from "./batch-enqueue.js";
import { dropSettledBase, isolationChoice, openBatchIsolation, refuseDirtyTree } from "./batch-isolation.js";
import { type BatchPlan, openPlannedBatch } from "./batch-plan.js";
import { reduceDue } from "./batch-reduce.js";
import type { BatchReport } from "./batch-report.js";
import type { BatchSpec } from "./batch-store.js";
import { type BatchHost, type BatchOutcome, executeBatch } from "./execute-local-batch.js";
import { rewriteFinishedReport } from "./finished-batch-report.js";
import {
  checkBatchDirs,
  journalWriteFailed,
  reportJournalRecovery,
  reportWriteFailed,
} from "./journal-safety.js";
import { JOURNAL_FILE, openLocalJournalBackend } from "./local-journal-backend.js";
import { plural } from "./plural.js";
import { type WrittenReport, writeReport } from "./write-batch-report.js";

/** A planned local batch and how this process runs it: the settings around it come from `environment`. */
export interface LocalBatchRun {
  readonly plan: BatchPlan;
  readonly state: ProjectState;
  /** The resolved run environment: settings, rules, MCP servers, endpoint; the caller closes it. */
  readonly environment: RunEnvironment;
  /** How every item's Bash runs (R-S6), decided for the batch's permission mode. */
  readonly bash: SubAgentBashOptions;
  /** A new batch's MCP servers, resolved before any state existed; else the batch's own config. */
  readonly servers?: ResolvedMcpServers | undefined;
  /** `--output DIR` was given (a new batch's results go there, checked before state exists). */
  readonly outputGiven: boolean;
  /** R-B2: `--isolate` / `--no-isolate`; a resume keeps what its batch started with. */
  readonly isolate?: boolean | undefined;
  readonly noIsolate?: boolean | undefined;
  readonly retryFailed?: boolean | undefined;
  /** R-B4: conflicted items run again, on the tree as it is now. */
  readonly retryConflicts?: boolean | undefined;
  readonly repair?: boolean | undefined;
  /** R-B8: items at once; by default 8, or every item with `api: "batches"`. */
  readonly concurrency?: number | undefined;
  readonly api?: "messages" | "batches" | undefined;
  readonly warm: boolean;
  /** `--max-budget-usd`, with the dry run's cost of the first requests as each item's guess. */
  readonly limitUsd?: number | undefined;
  readonly firstRequestsEstimate?: { readonly costUsd: number; readonly items: number } | undefined;
  /** R-R2: deadlines over the environment's endpoint env (the CLI's timeout flags). */
  readonly endpointEnv?: Record<string, string | undefined> | undefined;
}

/** How a local batch's run ended, its report written. */
export type LocalBatchOutcome =
  | {
      /** R-R7: a resume with nothing pending ran nothing; the report is written again. */
      readonly kind: "finished";
      readonly spec: BatchSpec;
      readonly dir: string;
      readonly report: BatchReport;
      readonly paths: WrittenReport;
    }
  | ({
      readonly kind: "ran";
      readonly spec: BatchSpec;
      readonly dir: string;
      readonly paths: WrittenReport;
    } & BatchOutcome);

/**
 * A local batch from its plan to its written report: isolation decided (a dirty tree refused
 * before any state exists), the state opened, the items enqueued once, the MCP servers started
 * once for every item, the items run in the worker pool, results.jsonl and the report written.
 * Notices go to `host.stderr` a line each; the caller prints the outcome and closes `environment`.
 */
export async function runLocalBatch(run: LocalBatchRun, host: BatchHost): Promise<LocalBatchOutcome> {
  const { plan, state, environment } = run;
  const notice = (line: string) => host.stderr.write(`${line}\n`);
  // R-B2: a new batch decides isolation (a resume keeps what it started with); a dirty tree is
  // refused before any state exists.
  const isolating =
    plan.kind === "new"
      ? isolationChoice({ isolate: run.isolate, "no-isolate": run.noIsolate }, plan.spec)
      : undefined;
  if (isolating?.isolate) await refuseDirtyTree(plan.spec.cwd, [state.dir, ...state.legacyDirs]);
  const {
    spec,
    dir,
    items,
    opened: backend,
  } = await openPlannedBatch(plan, state, run.outputGiven, (at) =>
    openLocalJournalBackend({
      dir: at,
      retryFailed: run.retryFailed ?? false,
      retryConflicts: run.retryConflicts ?? false,
      repair: run.repair ?? false,
      batchId: plan.spec.id,
    }),
  );
  try {
    const rules = environment.rules({ allow: spec.allowedTools, deny: spec.disallowedTools });
    if (plan.kind === "resume" && plan.changes.length > 0) {
      const one = plan.changes.length === 1;
      notice(
        `forkloop batch ${spec.id}: ${plan.changes.join(", ")} ${one ? "replaces the setting" : "replace the settings"} it started with; batch.json keeps ${one ? "it" : "them"} for later resumes`,
      );
    }
    reportJournalRecovery(backend, join(dir, JOURNAL_FILE), notice);
    await enqueueOnce(backend, items, {
      relist: relistFromSource(spec),
      repair: run.repair ?? false,
      notice,
    });
    // R-R7: a finished batch's resume runs nothing; it says so, and writes the report again.
    const states = await backend.list();
    // R-B7: a finished map whose reduce has not finished (a kill after the map) goes on into it.
    const reducing = spec.reduce !== undefined && (await reduceDue(dir, spec.reduce, states));
    if (plan.kind === "resume" && states.every((item) => item.status !== "pending") && !reducing) {
      await dropSettledBase(dir); // a run killed after its last settle, before it deleted the ref
      return { kind: "finished", spec, dir, ...(await rewriteFinishedReport(spec, dir, states, host.env)) };
    }
    // R-M1: the MCP servers start once, in this process, for every item (calls come over comlink).
    const servers =
      run.servers ??
      (await environment.mcpServers({ configFiles: spec.mcpConfig, strict: spec.strictMcpConfig }));
    const mcp = await environment.startMcp(servers, {
      resultsDir: join(dir, "mcp-results"),
      deny: rules.deny,
      signal: host.signal,
    });
    const count = (await backend.list()).length;
    await checkBatchDirs(spec, dir, count);
    // R-B4: conflicts put back in the queue run on the tree as it is now, not the batch's first base.
    const retriedConflicts = run.retryConflicts ? backend.retried.length : 0;
    // R-B8: every item is in each round (they wait on batches, not on this host), so a
    // batch's items all run at once unless concurrency says otherwise.
    const concurrency = run.concurrency ?? (run.api === "batches" ? Math.max(1, count) : 8);
    const isolation = await openBatchIsolation(
      spec,
      dir,
      isolating,
      notice,
      retriedConflicts,
      host.env.HOME,
      {
        pool: concurrency,
        dir: host.env.FORKLOOP_WORKSPACES_DIR,
      },
    );
    const redone = (await backend.interrupted()).length;
    notice(
      `forkloop batch ${spec.id}: ${plural(count, "item")}${
        plan.kind === "resume" ? ` (resuming; ${plural(redone, "interrupted item")} will be redone)` : ""
      }${spec.rpm === undefined ? "" : ` · at most ${spec.rpm} requests/min`} · state in ${dir}${
        isolation === undefined ? "" : ` · item copies in ${isolation.copiesAt}`
      }`,
    );
    const source = await environment.endpoint(run.endpointEnv, spec.cwd);
    const { limitUsd, firstRequestsEstimate: first } = run;
    const outcome = await executeBatch(
      {
        spec,
        dir,
        backend,
        source,
        settings: environment.settings,
        mcpTools: mcp.tools,
        bash: run.bash,
        concurrency,
        ...(run.api === undefined ? {} : { api: run.api }),
        warm: run.warm,
        ...(isolation === undefined ? {} : { isolation }),
        ...(limitUsd === undefined
          ? {}
          : {
              budget: {
                limitUsd,
                perItemEstimateUsd: first ? first.costUsd / Math.max(1, first.items) : 0,
              },
            }),
      },
      host,
    );
    const { report } = outcome;
    const paths = await writeReport(spec.outputDir, report).catch((error: unknown) => {
      throw reportWriteFailed(error, spec);
    });
    if (paths.keptPrevious) {
      notice(
        `forkloop: ${paths.keptPrevious.path} lists ${plural(paths.keptPrevious.finished, "finished item")}, more than the journal now holds (${report.totals.succeeded + report.totals.failed}); it was kept, and this run's results are in ${paths.results}`,
      );
    }
    return { kind: "ran", spec, dir, paths, ...outcome };
  } catch (error) {
    if (error instanceof LogWriteError) throw journalWriteFailed(error, spec.id);
    throw error;
  } finally {
    await backend.close().catch(() => {});
  }
}
