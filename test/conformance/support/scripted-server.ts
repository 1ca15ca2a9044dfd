import { type Brain, type RequestRecord, startSimulator } from "@forkloop/sim";
import { type Script, scriptBrain } from "./script.js";

/**
 * One simulator for a whole harness run, shared by every program and both sides: each run is a
 * client with its own API key, answered by its own script and logged apart (the simulator's
 * brain sees the key; the prompt cache is scoped by it too).
 */
export interface ScriptedServer {
  readonly url: string;
  /** A client of its own; `work` is its run's working directory (scripts see it). */
  client(name: string, script: Script | Brain, work: string): ScriptedClient;
  close(): Promise<void>;
}

export interface ScriptedClient {
  readonly apiKey: string;
  /** This client's requests, in arrival order. */
  requests(): RequestRecord[];
  /** Requests its script could not answer (each also got a text naming the failure). */
  scriptFailures(): string[];
}

export async function startScriptedServer(): Promise<ScriptedServer> {
  const clients = new Map<string, { brain: Brain; failures: string[] }>();
  const server = await startSimulator({
    brain: async (request) => {
      const client = clients.get(request.apiKey);
      if (!client) throw new Error(`no conformance client has the key ${request.apiKey}`);
      try {
        return await client.brain(request);
      } catch (error) {
        const message = `${(error as Error).name}: ${(error as Error).message}`;
        client.failures.push(message);
        // A 500 would be retried by both sides for a long while; a text ends the turn.
        return {
          content: [{ type: "text", text: `conformance script failed: ${message}` }],
          adaptiveThinking: false,
        };
      }
    },
  });
  let next = 0;
  return {
    url: server.url,
    client(name, script, work) {
      const apiKey = `sk-conformance-${next++}-${name.replace(/[^a-zA-Z0-9_-]/g, "-")}`;
      const failures: string[] = [];
      clients.set(apiKey, {
        brain: typeof script === "function" ? script : scriptBrain(script, work),
        failures,
      });
      return {
        apiKey,
        requests: () => server.requests().filter((record) => keyOf(record) === apiKey),
        scriptFailures: () => [...failures],
      };
    },
    close: () => server.close(),
  };
}

function keyOf(record: RequestRecord): string | undefined {
  const bearer = record.headers.authorization?.replace(/^Bearer\s+/i, "");
  return record.headers["x-api-key"] ?? bearer;
}
