import { resolve } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { loadAnthropicSdk } from "@forkloop/loop-core";
import { type AgentPool, createAgentPool, modelClientOptions } from "@forkloop/orchestrator";
import { type ModelSource, resolveModelSource } from "./model-endpoint.js";
import { RETRY_ENV_NAMES } from "./model-retry.js";

/**
 * What every session of one process shares (R-K1): the endpoint (for the embedded
 * simulator: one simulator), one worker pool for all their forks, and one API client for all
 * their main loops, hence one connection pool. Keyed by the environment that picks the endpoint;
 * reference-counted: the last session to finish closes it, so a program's process can exit.
 */
export interface SharedRuntime {
  readonly source: ModelSource;
  readonly pool: AgentPool;
  readonly client: Anthropic;
  /** Sessions holding it now. */
  readonly users: number;
}

interface Entry {
  runtime: Promise<{ source: ModelSource; pool: AgentPool; client: Anthropic }>;
  users: number;
}

const ENDPOINT_VARIABLES = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  "ANTHROPIC_BETAS",
  "FORKLOOP_API_KEY_HELPER_KEY",
  "FORKLOOP_API_KEY_HELPER",
  "FORKLOOP_API_KEY_HELPER_CWD",
  "FORKLOOP_API_KEY_HELPER_TIMEOUT_MS",
  "FORKLOOP_MODELS",
  "FORKLOOP_SIM_LATENCY",
  "FORKLOOP_SIM_FAULTS",
  // R-R2: sessions with other deadlines get a pool of their own.
  ...RETRY_ENV_NAMES,
] as const;

/** Sub-agents one pool thread carries at once (the orchestrator's default is 16). */
const SUB_AGENTS_PER_THREAD = 32;

/** The process-wide registry: a runtime per distinct endpoint environment. */
export class RuntimeRegistry {
  readonly #entries = new Map<string, Entry>();
  #started = 0;

  /** Runtimes started so far (each one endpoint, one pool, one client). */
  get started(): number {
    return this.#started;
  }

  /** Takes a share of the runtime for `env` (started on first use); `release()` gives it back. */
  async acquire(
    env: Record<string, string | undefined>,
    notice: (line: string) => void,
    /** The project directory a relative `FORKLOOP_MODELS` is read from (default: the process's). */
    dir?: string,
  ): Promise<SharedRuntime & { release(): Promise<void> }> {
    // A models file is the same runtime only if it is the same file: two projects' `models.json` are not.
    const models = env.FORKLOOP_MODELS ? resolve(dir ?? "", env.FORKLOOP_MODELS) : "";
    const key = JSON.stringify(
      ENDPOINT_VARIABLES.map((name) => (name === "FORKLOOP_MODELS" ? models : (env[name] ?? ""))),
    );
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      this.#started++;
      const created: Entry = { users: 0, runtime: start(env, notice, dir) };
      entry = created;
      this.#entries.set(key, created);
      created.runtime.catch(() => {
        if (this.#entries.get(key) === created) this.#entries.delete(key);
      });
    }
    entry.users++;
    const held = entry;
    let runtime: Awaited<Entry["runtime"]>;
    try {
      runtime = await held.runtime;
    } catch (error) {
      held.users--;
      throw error;
    }
    let released = false;
    return {
      ...runtime,
      get users() {
        return held.users;
      },
      release: async () => {
        if (released) return;
        released = true;
        held.users--;
        if (held.users > 0) return;
        if (this.#entries.get(key) === held) this.#entries.delete(key);
        await runtime.pool.close();
        await runtime.source.close();
      },
    };
  }
}

async function start(env: Record<string, string | undefined>, notice: (line: string) => void, dir?: string) {
  const source = await resolveModelSource(env as NodeJS.ProcessEnv, notice, dir);
  // Many sessions' forks share it: sub-agents wait on the network, so one thread carries many
  // (2 cores × 32 = 64 in flight, e.g. 32 sessions forking two each); more queue.
  const pool = createAgentPool({
    endpoint: source.endpoint,
    concurrentTasksPerWorker: SUB_AGENTS_PER_THREAD,
    // Threads start with the first fork: a query that never forks pays for none, and sessions
    // starting together do not share their cores with thread start-up before their first request.
    minThreads: 0,
  });
  const client = new (await loadAnthropicSdk())(modelClientOptions(source.endpoint));
  return { source, pool, client };
}

/** The registry `query()` uses unless given another (one per process). */
export const processRuntimes = new RuntimeRegistry();
