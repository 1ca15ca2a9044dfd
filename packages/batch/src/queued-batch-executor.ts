import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { AgentPool, SubAgentBashOptions } from "@forkloop/orchestrator";
import type { McpServersOnDemand, ModelSource, ProjectState } from "@forkloop/sdk";
import type { Settings } from "@forkloop/tools";
import { createBatchExecutor } from "./batch-executor.js";
import type { ItemExecutor } from "./batch-runner.js";
import { batchDir } from "./batch-store.js";
import type { QueuedBatch } from "./queue-store.js";
import { BatchRefusedError, type ExecutorWiring } from "./queue-worker.js";

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
  const mcpTools = await batchMcpTools(batch, host.mcp, host.self);
  const transcriptsDir = join(batchDir(host.state, batch.spec.id), "transcripts");
  await mkdir(transcriptsDir, { recursive: true, mode: 0o700 });
  const limit = batch.rpm === undefined ? "" : `, at most ${batch.rpm} requests/min on every host`;
  host.log(`batch ${batch.spec.id}: serving its items (model ${batch.spec.model}${limit})`);
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
  if (named.length === 0) return [];
  const { tools, unavailable } = await mcp.serversFor(named.map((server) => server.name));
  if (unavailable.length === 0) return tools;
  const have = mcp.names.length === 0 ? "none" : mcp.names.join(", ");
  const problems = unavailable.map((server) =>
    server.reason === "failed"
      ? `"${server.name}" failed to start here (${server.error})`
      : `"${server.name}" (${named.find((one) => one.name === server.name)?.transport}) is not in its configuration`,
  );
  throw new BatchRefusedError(
    "mcp_server_unavailable",
    `batch ${batch.spec.id} uses MCP servers that ${self} cannot start: ${problems.join("; ")} (it has: ${have}). Fix: configure each under that name for this worker — its --cwd project's .mcp.json (trusted), settings' mcpServers, or --mcp-config FILE — restart the worker, and run the batch again.`,
  );
}
