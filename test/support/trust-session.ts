import { type Options, query, type SDKMessage } from "@forkloop/sdk";
import type { Simulator } from "@forkloop/sim";

/** What one `query()` session did, as the trust tests look at it. */
export interface SessionSeen {
  readonly messages: SDKMessage[];
  /** Every line the session wrote to stderr. */
  readonly stderr: string[];
  /** The `system` field of each /v1/messages request the simulator recorded for this session, as JSON text. */
  readonly systemPrompts: string[];
  /** Each recorded request body, whole. */
  readonly bodies: string[];
  /** The error query() threw (a bad settings file, …), if any. */
  readonly error?: Error;
}

/**
 * Runs one `query()` session in `cwd` against `sim` (its request log cleared first), with HOME =
 * `home` and state kept in `stateDir`, and collects what it sent and said.
 */
export async function runTrustSession(
  sim: Simulator,
  options: { cwd: string; home: string; stateDir: string; prompt?: string; extra?: Options },
): Promise<SessionSeen> {
  sim.clearRequests();
  const stderr: string[] = [];
  const messages: SDKMessage[] = [];
  let error: Error | undefined;
  try {
    for await (const message of query({
      prompt: options.prompt ?? "Say hi",
      options: {
        cwd: options.cwd,
        stateDir: options.stateDir,
        env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url, HOME: options.home },
        stderr: (line) => stderr.push(line),
        ...options.extra,
      },
    })) {
      messages.push(message);
    }
  } catch (thrown) {
    error = thrown as Error;
  }
  const records = sim.requests().filter((record) => record.path === "/v1/messages");
  return {
    messages,
    stderr,
    bodies: records.map((record) => record.rawBody),
    systemPrompts: records.map((record) =>
      JSON.stringify((JSON.parse(record.rawBody) as { system?: unknown }).system ?? null),
    ),
    ...(error === undefined ? {} : { error }),
  };
}
