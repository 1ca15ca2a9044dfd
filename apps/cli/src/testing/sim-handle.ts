/** One request the simulator recorded (`GET /_sim/requests`). */
export interface SimRequestRecord {
  path: string;
  status: number;
  /** The `x-forkloop-query-source` header: `sdk` for the main loop, `compact`, `agent:…`. */
  querySource: string | null;
  fault: string | null;
  rawBody: string;
  /** The request's headers, names in lower case. */
  headers: Record<string, string>;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_read_input_tokens: number;
    cache_creation_input_tokens: number;
  } | null;
  startedAt: number;
  /** When the response's first byte went out: a cache entry it writes is readable from then (R-F4). */
  firstByteAt: number | null;
  endedAt: number | null;
}

/** The simulator's request records, oldest first. */
async function simRequests(url: string): Promise<SimRequestRecord[]> {
  const response = await fetch(`${url}/_sim/requests`);
  return (await response.json()) as SimRequestRecord[];
}

/** A simulator a test started (in this process or as a `forkloop sim` process). */
export interface SimHandle {
  readonly url: string;
  /** The environment that points the CLI at it. */
  readonly env: { ANTHROPIC_API_KEY: string; ANTHROPIC_BASE_URL: string };
  /** Its request records (`GET /_sim/requests`). */
  requests(): Promise<SimRequestRecord[]>;
  stop(): Promise<void>;
}

/** The handle of a simulator whose first stdout line (`forkloop sim` prints its URL first) is in `stdout`. */
export function simHandle(stdout: string, stop: () => Promise<unknown>): SimHandle {
  const url = stdout.trim().split("\n")[0] ?? "";
  return {
    url,
    env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: url },
    requests: () => simRequests(url),
    async stop() {
      await stop();
    },
  };
}

/** Runs `body` with a started simulator and always stops it (in-process or spawned alike). */
export async function withStopped<S extends { stop(): Promise<void> }, T>(
  sim: S,
  body: (sim: S) => Promise<T>,
): Promise<T> {
  try {
    return await body(sim);
  } finally {
    await sim.stop();
  }
}
