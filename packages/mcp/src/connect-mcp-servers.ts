import type { Tool } from "@forkloop/loop-core";
import type { McpServerConfig, McpServerEntry } from "./mcp-config.js";
import { DEFAULT_MCP_LIMITS, type McpLimits } from "./mcp-limits.js";
import type { McpNotice } from "./mcp-notice.js";
import type { McpServerStatus } from "./server-connection.js";

export interface ConnectMcpOptions {
  /** Working directory of stdio servers (default: this process's). */
  readonly cwd?: string;
  /** Environment stdio servers inherit before their own `env` (default: process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** MCP_TIMEOUT, MCP_TOOL_TIMEOUT, MAX_MCP_OUTPUT_TOKENS (see `mcpLimitsFromEnv`). */
  readonly limits?: McpLimits;
  /** The session's directory for results too large to show; without it they are refused. */
  readonly resultsDir?: string;
  /** Start failures, deaths, restarts, skipped tools, large outputs. Must not throw. */
  readonly onNotice?: (notice: McpNotice) => void;
  /** The session's stop (Ctrl+C, SIGTERM): servers still starting give up at once, as failed. */
  readonly signal?: AbortSignal | undefined;
}

/** The session's MCP servers: their tools, their current status, and one close for all. */
export interface McpConnections {
  /** Every tool of every server that started, in server order, then the server's order. */
  readonly tools: readonly Tool[];
  /** The status of each configured server, now (it changes when a server dies or restarts). */
  status(): McpServerStatus[];
  /** Stops every server (stdio processes are ended); idempotent. */
  close(): Promise<void>;
}

/**
 * Starts every configured server in parallel (R-M1): a server that fails is reported (status
 * `failed`, a `server_failed` notice) and the others go on. Entries come from `parseMcpServers` /
 * `readMcpConfigFile` (files) or, for in-process servers, `{ name: { type: "sdk", instance } }`.
 */
export async function connectMcpServers(
  servers: readonly McpServerEntry[] | Readonly<Record<string, McpServerConfig>>,
  options: ConnectMcpOptions = {},
): Promise<McpConnections> {
  const entries: readonly McpServerEntry[] = Array.isArray(servers)
    ? servers
    : Object.entries(servers).map(([name, config]) => ({ name, config, source: { scope: "sdk" as const } }));
  const limits = options.limits ?? DEFAULT_MCP_LIMITS;
  if (entries.length === 0) return { tools: [], status: () => [], close: async () => undefined };
  // R-V2: the MCP SDK's client and transports (a few hundred modules with their zod and JSON
  // Schema code) load when a session first connects a server, not when a package is imported;
  // so do the modules that make its tools.
  const [{ ServerConnection }, { mcpTool }] = await Promise.all([
    import("./server-connection.js"),
    import("./mcp-tool.js"),
  ]);
  const connections = entries.map(
    (entry) =>
      new ServerConnection(entry, {
        cwd: options.cwd,
        env: options.env,
        limits,
        onNotice: options.onNotice,
        signal: options.signal,
      }),
  );
  const started = await Promise.all(connections.map((connection) => connection.start()));
  const tools: Tool[] = [];
  const names = new Set<string>();
  started.forEach((outcome, index) => {
    const connection = connections[index]!;
    if (!outcome.ok) {
      options.onNotice?.({ type: "server_failed", server: connection.name, error: outcome.error });
      return;
    }
    const skip = (tool: string, reason: string) =>
      options.onNotice?.({ type: "tool_skipped", server: connection.name, tool, reason });
    for (const info of outcome.tools) {
      const made = mcpTool(connection, info, {
        maxOutputTokens: limits.maxOutputTokens,
        resultsDir: options.resultsDir,
        onNotice: options.onNotice,
      });
      if (!made.ok) {
        skip(info.name, made.reason);
      } else if (names.has(made.tool.name)) {
        skip(
          info.name,
          `its name ${made.tool.name} is another tool's (names are normalised to [A-Za-z0-9_-])`,
        );
      } else {
        names.add(made.tool.name);
        tools.push(made.tool);
      }
    }
  });
  let closed: Promise<void> | undefined;
  return {
    tools,
    status: () => connections.map((connection) => connection.status()),
    close: () => {
      closed ??= Promise.all(connections.map((connection) => connection.close())).then(() => undefined);
      return closed;
    },
  };
}
