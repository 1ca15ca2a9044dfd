import { createProcessMark, endMarked } from "@forkloop/loop-core";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerConfig } from "./mcp-config.js";

export type McpTransportType = "stdio" | "http" | "sse" | "sdk";

export interface TransportOptions {
  /** Working directory of stdio servers (the session's project). */
  readonly cwd?: string | undefined;
  /** Environment stdio servers inherit, before their own `env` (default: this process's). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

export interface OpenedTransport {
  readonly transport: Transport;
  /** What the server wrote to stderr lately (stdio only): the reason a start or a death gives. */
  stderrTail(): string;
  /**
   * After the transport is closed: ends what the server left running (stdio only). The SDK ends
   * only the process it spawned; a server behind a wrapper (`sh -c`, `npx`, `uvx`) that keeps
   * running once its stdin ends would outlive the session.
   */
  endLeftovers(): Promise<void>;
}

const nothingLeft = async () => undefined;

const STDERR_TAIL_CHARS = 2_000;

/**
 * A new transport for one connection attempt (a restart gets a fresh one). stdio servers inherit
 * the environment as in Claude Code, plus their own `env`; their stderr is captured, not mixed
 * into forkloop's own output.
 */
export async function openTransport(
  config: McpServerConfig,
  options: TransportOptions,
): Promise<OpenedTransport> {
  switch (config.type) {
    case undefined:
    case "stdio": {
      const env: Record<string, string> = {};
      for (const [key, value] of Object.entries(options.env ?? process.env)) {
        if (value !== undefined) env[key] = value;
      }
      // The process marks (loop-core's marked-processes.ts): everything the server starts inherits
      // the mark in its environment, so it can be found and ended when the server closes, dies, or
      // this process exits at once (a second Ctrl+C). The descriptor mark is not passed (the SDK
      // spawns).
      const mark = createProcessMark();
      mark.release(undefined);
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args ?? [],
        env: { ...env, ...config.env, ...mark.env },
        stderr: "pipe",
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      });
      let tail = "";
      transport.stderr?.on("data", (chunk: Buffer) => {
        tail = (tail + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
      });
      return { transport, stderrTail: () => tail.trim(), endLeftovers: () => endMarked(mark) };
    }
    case "http":
      return {
        transport: new StreamableHTTPClientTransport(new URL(config.url), {
          requestInit: { headers: config.headers ?? {} },
        }),
        stderrTail: () => "",
        endLeftovers: nothingLeft,
      };
    case "sse":
      return {
        transport: new SSEClientTransport(new URL(config.url), {
          requestInit: { headers: config.headers ?? {} },
        }),
        stderrTail: () => "",
        endLeftovers: nothingLeft,
      };
    case "sdk": {
      const [client, server] = InMemoryTransport.createLinkedPair();
      await config.instance.connect(server);
      return { transport: client, stderrTail: () => "", endLeftovers: nothingLeft };
    }
    default: {
      const unknown: { type: string } = config;
      throw new Error(`unknown MCP transport ${unknown.type}`);
    }
  }
}
