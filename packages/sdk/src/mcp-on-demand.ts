import type { Tool } from "@forkloop/loop-core";
import {
  connectMcpServers,
  describeMcpNotice,
  type McpConnections,
  type McpServerEntry,
  mcpLimitsFromEnv,
} from "@forkloop/mcp";
import { mcpServerEnvironment } from "./mcp-servers.js";
import { OptionsError } from "./options-error.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The tools of the servers asked for, and the servers that could not give any. */
export interface McpServersFor {
  readonly tools: readonly Tool[];
  readonly unavailable: readonly UnavailableMcpServer[];
}

export type UnavailableMcpServer =
  | { readonly name: string; readonly reason: "not_configured" }
  | { readonly name: string; readonly reason: "failed"; readonly error: string };

/** A process's MCP servers, each started the first time it is asked for and shared from then on. */
export interface McpServersOnDemand {
  /** The configured servers' names, whether started or not. */
  readonly names: readonly string[];
  /** Starts the named servers not started yet, in parallel; every later call shares them. */
  serversFor(names: readonly string[]): Promise<McpServersFor>;
  /** Stops every started server (stdio processes are ended); idempotent. */
  close(): Promise<void>;
}

/**
 * `forkloop worker`'s MCP servers (R-M1, R-B1): its own configuration, resolved at start
 * (`resolveMcpServers`, a bad one is exit 2 then), but a server starts only when a batch that
 * names it is served — a worker serves many batches and most name few of its servers. Once
 * started, a server is shared by every item of every batch in the process until `close`. A
 * server that failed to start is tried again by the next batch that names it (a database that
 * was down a minute ago may be up now); one that dies later is restarted once, as in a session.
 */
export function mcpServersOnDemand(
  entries: readonly McpServerEntry[],
  options: {
    readonly cwd: string;
    readonly env: Env;
    /** Where results too large to show are saved (under the worker's state). */
    readonly resultsDir: string;
    readonly warn: (line: string) => void;
  },
): McpServersOnDemand {
  const limits = mcpLimitsFromEnv(options.env);
  if (!limits.ok) throw new OptionsError(limits.error);
  const byName = new Map(entries.map((entry) => [entry.name, entry]));
  const started = new Map<string, Promise<McpConnections>>();
  let closed = false;

  const start = (entry: McpServerEntry): Promise<McpConnections> => {
    let connecting = started.get(entry.name);
    if (connecting === undefined) {
      connecting = connectMcpServers([entry], {
        cwd: options.cwd,
        env: mcpServerEnvironment(options.env),
        limits: limits.limits,
        resultsDir: options.resultsDir,
        onNotice: (notice) => options.warn(`forkloop: ${describeMcpNotice(notice)}`),
      });
      started.set(entry.name, connecting);
    }
    return connecting;
  };

  const serverFor = async (name: string): Promise<McpServersFor> => {
    const entry = byName.get(name);
    if (entry === undefined) return { tools: [], unavailable: [{ name, reason: "not_configured" }] };
    const connecting = start(entry);
    const connections = await connecting;
    const status = connections.status()[0];
    if (status?.status !== "failed") return { tools: connections.tools, unavailable: [] };
    if (started.get(name) === connecting) started.delete(name); // the next batch tries again
    await connections.close();
    return { tools: [], unavailable: [{ name, reason: "failed", error: status.error ?? "did not start" }] };
  };

  return {
    names: [...byName.keys()],
    async serversFor(names) {
      if (closed) throw new Error("the MCP servers are closed");
      const each = await Promise.all([...new Set(names)].map(serverFor));
      return { tools: each.flatMap((one) => one.tools), unavailable: each.flatMap((one) => one.unavailable) };
    },
    async close() {
      closed = true;
      const all = await Promise.allSettled(started.values());
      started.clear();
      await Promise.all(all.map((one) => (one.status === "fulfilled" ? one.value.close() : undefined)));
    },
  };
}
