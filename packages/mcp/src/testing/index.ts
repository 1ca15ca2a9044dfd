/**
 * Test helpers (`@forkloop/mcp/testing`): the repo's own MCP test server and the real servers on
 * npm that the tests run against (dev dependencies of @forkloop/mcp, started from node_modules:
 * nothing is downloaded at run time).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@forkloop/loop-core/testing";
import type { McpStdioServerConfig } from "../mcp-config.js";

export { type CallOutcome, callTool } from "./call-tool.js";
export { TEST_PNG_BASE64 } from "./test-png.js";

/** The built test server (`dist/testing/test-server.js`; build @forkloop/mcp first). */
export const TEST_SERVER_PATH = fileURLToPath(new URL("../../dist/testing/test-server.js", import.meta.url));

/** A stdio config that starts the test server with the given flags (see test-server.ts). */
export function testServerConfig(...flags: string[]): McpStdioServerConfig {
  return { command: process.execPath, args: [TEST_SERVER_PATH, ...flags] };
}

const require = createRequire(import.meta.url);

/** The entry script of an npm MCP server package (all three ship `dist/index.js`). */
export function realServerScript(name: "server-filesystem" | "server-memory" | "server-everything"): string {
  return join(dirname(require.resolve(`@modelcontextprotocol/${name}/package.json`)), "dist", "index.js");
}

/** `@modelcontextprotocol/server-filesystem`, confined to `directories`. */
export function filesystemServerConfig(...directories: string[]): McpStdioServerConfig {
  return { command: process.execPath, args: [realServerScript("server-filesystem"), ...directories] };
}

/** `@modelcontextprotocol/server-memory`, its knowledge graph in `memoryFile`. */
export function memoryServerConfig(memoryFile: string): McpStdioServerConfig {
  return {
    command: process.execPath,
    args: [realServerScript("server-memory")],
    env: { MEMORY_FILE_PATH: memoryFile },
  };
}

/** `@modelcontextprotocol/server-everything` over stdio. */
export function everythingServerConfig(): McpStdioServerConfig {
  return { command: process.execPath, args: [realServerScript("server-everything"), "stdio"] };
}

export interface RunningHttpServer {
  /** e.g. `http://127.0.0.1:PORT/mcp` (Streamable HTTP) or `…/sse` (legacy SSE). */
  readonly url: string;
  readonly process: ChildProcess;
  close(): Promise<void>;
}

/**
 * `server-everything` as an HTTP server on a free port (`streamableHttp` or the legacy `sse`).
 * It takes its port from PORT only, so a free one is picked first.
 */
export async function startEverythingHttp(mode: "streamableHttp" | "sse"): Promise<RunningHttpServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [realServerScript("server-everything"), mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (/listening on port|running on port/i.test(output)) resolve();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`server-everything ${mode} exited (${code}): ${output}`)));
  });
  child.stdout?.resume();
  child.stderr?.resume();
  const url = `http://127.0.0.1:${port}/${mode === "sse" ? "sse" : "mcp"}`;
  return {
    url,
    process: child,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
