import { mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Tool } from "@forkloop/loop-core";
import { ForkloopError } from "@forkloop/loop-core/errors";
import type { AgentPool, SubAgentBashOptions } from "@forkloop/orchestrator";
import type { McpServersOnDemand, ModelSource, ProjectState } from "@forkloop/sdk";
import type { Settings } from "@forkloop/tools";
import {
  type CopiesPlacement,
  openWorkspaceIsolation,
  type WorkspaceIsolation,
} from "@forkloop/tools/workspace";
import { createBatchExecutor } from "./batch-executor.js";
import type { ItemExecutor } from "./batch-runner.js";
import { batchDir } from "./batch-store.js";
import type { QueuedBatch, QueuedMcpServer } from "./queue-store.js";
import { BatchRefusedError, type ExecutorWiring } from "./queue-worker.js";
import { outputSchemaProblem } from "./structured-output.js";

/** What a `forkloop worker` host runs every queued batch with: its own settings, endpoint and tools. */
export interface WorkerHost {
  readonly state: ProjectState;
  readonly cwd: string;
  readonly settings: Settings;
  readonly source: ModelSource;
  readonly pool: AgentPool;
  readonly bash: SubAgentBashOptions;
  /** This host's MCP servers, started when a batch that names one is served (R-M1). */
  readonly mcp: McpServersOnDemand;
  /** R-B2: where an isolated batch's item copies are made (in memory when there is room), as a local batch's. */
  readonly copies: CopiesPlacement;
  /** How this worker names itself in a refusal: `forkloop worker HOST:PID`. */
  readonly self: string;
  readonly log: (line: string) => void;
}

/**
 * R-B1: a queued batch's executor on this host — the batch's spec (Redis) over this host's
 * settings, endpoint, sandbox and MCP servers; its transcripts in this host's state directory.
 */
export async function queuedBatchExecutor(
  batch: QueuedBatch,
  wiring: ExecutorWiring,
  host: WorkerHost,
): Promise<ItemExecutor> {
  // R-B6: the schema is read from Redis like every setting: one that cannot be used refuses the batch.
  const schema = batch.spec.outputSchema;
  const problem = schema === undefined ? undefined : outputSchemaProblem(schema);
  if (problem !== undefined)
    throw new BatchRefusedError(
      "batch_refused",
      `batch ${batch.spec.id} is not run by ${host.self}: its --json-schema cannot be used (${problem}); start it again with a schema whose type is "object".`,
    );
  const mcpTools = await batchMcpTools(batch, host.mcp, host.self);
  const transcriptsDir = join(batchDir(host.state, batch.spec.id), "transcripts");
  await mkdir(transcriptsDir, { recursive: true, mode: 0o700 });
  const limit = batch.rpm === undefined ? "" : `, at most ${batch.rpm} requests/min on every host`;
  const checked = schema === undefined ? "" : ", each answer checked against its --json-schema";
  host.log(`batch ${batch.spec.id}: serving its items (model ${batch.spec.model}${limit}${checked})`);
  return createBatchExecutor({
    mcpTools,
    spec: batch.spec,
    cwd: host.cwd,
    settings: host.settings,
    source: host.source,
    pool: host.pool,
    bash: host.bash,
    transcriptsDir,
    onNotice: host.log,
    onEvent: wiring.onEvent,
    ...(wiring.requestSlot === undefined ? {} : { requestSlot: wiring.requestSlot }),
  });
}

/**
 * The MCP tools of the servers a batch names, started here on first use (R-M1, R-B1). A server
 * this worker does not have, or one that did not start, refuses the whole batch: its items would
 * all run without tools their prompt expects.
 */
async function batchMcpTools(batch: QueuedBatch, mcp: McpServersOnDemand, self: string) {
  const named = batch.mcpServers ?? [];
  const { tools, problems, have } = await namedMcpTools(named, mcp);
  if (problems.length === 0) return tools;
  throw new BatchRefusedError(
    "mcp_server_unavailable",
    `batch ${batch.spec.id} uses MCP servers that ${self} cannot start: ${problems.join("; ")} (it has: ${have}). Fix: configure each under that name for this worker — its --cwd project's .mcp.json (trusted), settings' mcpServers, or --mcp-config FILE — restart the worker, and run the batch again.`,
  );
}

/**
 * R-M1, R-B1: the tools of a queued batch's `named` servers from this host's `mcp` (started on
 * first use), or why some cannot be had here — one not in its configuration, one that failed to
 * start — and the names it has. A worker serving the batch and its producer running the reduce
 * use it.
 */
export async function namedMcpTools(
  named: readonly QueuedMcpServer[],
  mcp: McpServersOnDemand,
): Promise<{ tools: readonly Tool[]; problems: readonly string[]; have: string }> {
  if (named.length === 0) return { tools: [], problems: [], have: "" };
  const { tools, unavailable } = await mcp.serversFor(named.map((server) => server.name));
  const have = mcp.names.length === 0 ? "none" : mcp.names.join(", ");
  const problems = unavailable.map((server) =>
    server.reason === "failed"
      ? `"${server.name}" failed to start here (${server.error})`
      : `"${server.name}" (${named.find((one) => one.name === server.name)?.transport}) is not in its configuration`,
  );
  return { tools, problems, have };
}

/**
 * R-B2: where this worker makes an isolated queued batch's worktrees — its checkout (`--cwd`) at
 * the batch's base commit, under this process's own directory of the batch's state (two workers
 * on one host never sweep each other's). A worker killed earlier left its worktrees there: those
 * of processes no longer alive are removed first. A checkout without the commit refuses the batch.
 */
export async function queuedItemIsolation(
  batch: QueuedBatch,
  host: WorkerHost,
  at?: string,
): Promise<WorkspaceIsolation> {
  const first = batch.isolation?.base;
  if (first === undefined) throw new Error(`batch ${batch.spec.id} is not isolated`);
  const base = at ?? first;
  const workers = join(batchDir(host.state, batch.spec.id), "workers");
  // R-B4: a retry round's base (`at`) has its own directory beside the batch's: `<pid>.<base>`.
  const own = base === first ? String(process.pid) : `${process.pid}.${base.slice(0, 12)}`;
  // A dead worker's directory is swept where its record says its copies were; this one's are placed.
  const open = (name: string, copies?: CopiesPlacement) =>
    openWorkspaceIsolation({
      cwd: host.cwd,
      batchDir: join(workers, name),
      commit: base,
      ...(copies === undefined ? {} : { copies }),
    });
  try {
    for (const name of await readdir(workers).catch(() => [])) {
      const pid = name.split(".")[0]!;
      if (pid === String(process.pid) || alive(Number(pid))) continue;
      await (await open(name)).sweep();
      await rm(join(workers, name), { recursive: true, force: true });
    }
    const isolation = await open(own, host.copies);
    await isolation.sweep();
    host.log(
      `batch ${batch.spec.id}: items are isolated: each runs in a git worktree of ${base.slice(0, 12)} · item copies in ${isolation.copiesAt}`,
    );
    return isolation;
  } catch (error) {
    // A checkout that cannot give the base (not a repository, the commit not fetched): the batch's fix.
    if (!(error instanceof ForkloopError && error.code === "invalid_options")) throw error;
    throw new BatchRefusedError(
      "isolation_unavailable",
      `batch ${batch.spec.id} isolates its items and ${host.self} cannot: ${error.message}`,
    );
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
