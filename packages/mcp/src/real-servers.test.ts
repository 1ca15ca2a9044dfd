import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcpServers, type McpConnections } from "./connect-mcp-servers.js";
import {
  callTool,
  everythingServerConfig,
  filesystemServerConfig,
  memoryServerConfig,
  type RunningHttpServer,
  startEverythingHttp,
} from "./testing/index.js";

/**
 * Servers the project did not write, from npm (dev dependencies, run from node_modules): the
 * reference filesystem and memory servers over stdio, and server-everything over stdio,
 * Streamable HTTP and the legacy SSE transport — all started at once, as a session does.
 */
describe("R-M1: real MCP servers from npm", () => {
  let dir: string;
  let mcp: McpConnections;
  const http: RunningHttpServer[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "forkloop-mcp-real-"));
    await writeFile(join(dir, "notes.txt"), "forkloop was here\n");
    const [streamable, sse] = await Promise.all([
      startEverythingHttp("streamableHttp"),
      startEverythingHttp("sse"),
    ]);
    http.push(streamable!, sse!);
    mcp = await connectMcpServers({
      files: filesystemServerConfig(dir),
      memory: memoryServerConfig(join(dir, "memory.jsonl")),
      everything: everythingServerConfig(),
      "everything-http": { type: "http", url: streamable!.url },
      "everything-sse": { type: "sse", url: sse!.url },
    });
  }, 60_000);

  afterAll(async () => {
    await mcp?.close();
    await Promise.all(http.map((server) => server.close()));
  });

  it("R-M1: every server connects over its transport", () => {
    expect(mcp.status().map(({ name, status, transport }) => [name, status, transport])).toEqual([
      ["files", "connected", "stdio"],
      ["memory", "connected", "stdio"],
      ["everything", "connected", "stdio"],
      ["everything-http", "connected", "http"],
      ["everything-sse", "connected", "sse"],
    ]);
  });

  it("R-M1: server-filesystem reads a real file; its annotations make reads read-only and writes not", async () => {
    const read = await callTool(mcp.tools, "mcp__files__read_text_file", { path: join(dir, "notes.txt") });
    // Its structuredContent goes to the model as JSON, as Claude Code sends it (R-M1).
    expect(read).toMatchObject({ isError: false, text: JSON.stringify({ content: "forkloop was here\n" }) });
    const tool = (name: string) => mcp.tools.find((each) => each.name === `mcp__files__${name}`)!;
    expect(tool("read_text_file").isReadOnly({})).toBe(true);
    expect(tool("write_file").isReadOnly({})).toBe(false);
    expect(tool("write_file").isConcurrencySafe({})).toBe(false);
    // The server's own confinement answers a path outside its directory.
    const outside = await callTool(mcp.tools, "mcp__files__read_text_file", { path: "/etc/hostname" });
    expect(outside.isError).toBe(true);
    expect(outside.text).toMatch(/denied|outside|not allowed/i);
  });

  it("R-M1: server-memory stores entities in its file and reads them back", async () => {
    const created = await callTool(mcp.tools, "mcp__memory__create_entities", {
      entities: [{ name: "forkloop", entityType: "project", observations: ["speaks MCP"] }],
    });
    expect(created.isError).toBe(false);
    const graph = await callTool(mcp.tools, "mcp__memory__read_graph", {});
    expect(graph.text).toContain("speaks MCP");
    expect(await readFile(join(dir, "memory.jsonl"), "utf8")).toContain('"name":"forkloop"');
  });

  it("R-M1: server-everything over stdio, Streamable HTTP and SSE: echo, sums, images, structured content", async () => {
    for (const server of ["everything", "everything-http", "everything-sse"]) {
      expect((await callTool(mcp.tools, `mcp__${server}__echo`, { message: `hi ${server}` })).text).toBe(
        `Echo: hi ${server}`,
      );
    }
    expect((await callTool(mcp.tools, "mcp__everything__get-sum", { a: 2, b: 40 })).text).toContain("42");
    const image = await callTool(mcp.tools, "mcp__everything-http__get-tiny-image", {});
    expect(Array.isArray(image.content) && image.content.some((block) => block.type === "image")).toBe(true);
    const structured = await callTool(mcp.tools, "mcp__everything__get-structured-content", {
      location: "New York",
    });
    expect(structured).toMatchObject({ isError: false, text: expect.stringContaining("temperature") });
  });

  it("R-M1: the servers' JSON Schemas are enforced before the call (server-everything's get-sum takes numbers)", async () => {
    const bad = await callTool(mcp.tools, "mcp__everything-sse__get-sum", { a: "two", b: 40 });
    expect(bad).toMatchObject({ isError: true, text: expect.stringContaining("InputValidationError") });
  });
});
