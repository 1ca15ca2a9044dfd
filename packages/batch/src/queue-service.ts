import { hostname } from "node:os";
import { join } from "node:path";
import type { SharedClock } from "@forkloop/orchestrator";
import { type ProjectState, resolveRunEnvironment } from "@forkloop/sdk";
import { describeHostFailure, endpointUrl } from "@forkloop/sdk/internal";
import { type SandboxMode, SETTING_SOURCES } from "@forkloop/tools";
import { createBatchPool } from "./batch-executor.js";
import { openQueue, type QueueAddress } from "./queue-connection.js";
import { type QueueWorker, type QueueWorkerEvent, startQueueWorker } from "./queue-worker.js";
import { queuedBatchExecutor, queuedItemIsolation, type WorkerHost } from "./queued-batch-executor.js";
import type { WorkerPolicy } from "./worker-policy.js";

/** What `forkloop worker` serves a queue with: this host's project and the operator's choices. */
export interface QueueServiceOptions {
  readonly address: QueueAddress;
  /** The project the items work in on this host, and where its state is. */
  readonly cwd: string;
  readonly state: ProjectState;
  /** The process's environment (HOME, PATH, the endpoint's variables). */
  readonly env: Record<string, string | undefined>;
  /** `--trust-project`: this project's own settings as they are (R-S5). */
  readonly trustProject: boolean;
  /** `--sandbox`: each item's Bash in bubblewrap; a batch cannot change it (R-S6). */
  readonly sandbox?: SandboxMode | undefined;
  /** `--mcp-config` (absolute paths, or JSON) and `--strict-mcp-config`: this host's MCP servers. */
  readonly mcpConfig?: readonly string[] | undefined;
  readonly strictMcpConfig?: boolean | undefined;
  readonly concurrency: number;
  /** `--allow-dangerously-skip-permissions`: also run bypassPermissions batches. */
  readonly allowBypassPermissions: boolean;
  readonly lockDurationMs?: number | undefined;
  readonly stalledIntervalMs?: number | undefined;
  readonly clock?: SharedClock | undefined;
  /** Lines for the operator: the settings' and sandbox's notices, each batch served. */
  readonly log: (line: string) => void;
  readonly onEvent: (event: QueueWorkerEvent) => void;
}

/** A running queue worker and what it was started with. */
export interface QueueService {
  readonly worker: QueueWorker;
  /** R-B1 (trust): the operator's choices, which no batch on the queue can change. */
  readonly policy: WorkerPolicy;
  /** How this worker names itself: `forkloop worker HOST:PID`. */
  readonly self: string;
  /** After `worker.close()`: the pool, the MCP servers and endpoint it started, and Redis. */
  close(): Promise<void>;
}

/**
 * R-A4, R-B1: `forkloop worker`'s host — this host's run environment resolved once (settings,
 * sandbox, MCP servers, endpoint: the resolver `query()` and a local batch use), then the items
 * of every batch on the queue run in this process's worker pool. A bad settings file, an
 * unavailable sandbox that must be on or a bad MCP configuration throws (exit 2) before Redis is
 * contacted; servers start only when a batch names them.
 */
export async function startQueueService(options: QueueServiceOptions): Promise<QueueService> {
  const { cwd, state, log } = options;
  const run = await resolveRunEnvironment({
    cwd,
    env: options.env,
    settingSources: SETTING_SOURCES,
    trustProject: options.trustProject,
    warn: log,
  });
  const { settings } = run;
  // R-S6: workers run unattended, so `auto` sandboxes every item's Bash when bubblewrap works here;
  // `on` without it fails now, before the worker takes an item.
  const bash = run.bash("dontAsk", options.sandbox, true);
  // R-M1, R-B1: this host's own MCP configuration, resolved as a local run would (a bad one is
  // exit 2 now); servers start only when a batch names them.
  const mcp = run.mcpOnDemand(
    await run.mcpServers({ configFiles: options.mcpConfig, strict: options.strictMcpConfig }),
    { resultsDir: join(state.dir, "mcp-results", `worker-${process.pid}`) },
  );
  const self = `forkloop worker ${hostname()}:${process.pid}`;
  const policy: WorkerPolicy = {
    allowBypassPermissions: options.allowBypassPermissions,
    bypassDisabledBySettings: settings.permissions.disableBypassPermissionsMode === "disable",
  };
  const connection = await openQueue(options.address, log);
  // The retry and timeout settings (R-R1, R-R2) apply to a worker's model requests as to a local batch's.
  const source = await run.endpoint();
  const pool = createBatchPool(source, options.concurrency, options.clock);
  const url = endpointUrl(source);
  const copies = { pool: options.concurrency, dir: options.env.FORKLOOP_WORKSPACES_DIR };
  const host: WorkerHost = { state, cwd, settings, source, pool, bash, mcp, copies, self, log };
  const close = async () => {
    await pool.close();
    // The MCP servers and the endpoint it started.
    await run.close();
    connection.disconnect();
  };
  try {
    const worker = await startQueueWorker({
      connection,
      concurrency: options.concurrency,
      policy,
      ...(options.lockDurationMs === undefined ? {} : { lockDurationMs: options.lockDurationMs }),
      ...(options.stalledIntervalMs === undefined ? {} : { stalledIntervalMs: options.stalledIntervalMs }),
      stopOnFailure: (error, batch) => describeHostFailure(error, { url, model: batch.spec.model })?.sentence,
      executorFor: (batch, wiring) => queuedBatchExecutor(batch, wiring, host),
      isolationFor: (batch, base) => queuedItemIsolation(batch, host, base),
      onEvent: options.onEvent,
    });
    return { worker, policy, self, close };
  } catch (error) {
    await close();
    throw error;
  }
}
