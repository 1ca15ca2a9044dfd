import { getEventListeners } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testContext } from "@forkloop/loop-core/testing";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type ConnectMcpOptions, connectMcpServers, type McpConnections } from "./connect-mcp-servers.js";
import type { McpServerConfig } from "./mcp-config.js";
import { DEFAULT_MCP_LIMITS } from "./mcp-limits.js";
import type { McpNotice } from "./mcp-notice.js";
import { callTool, TEST_PNG_BASE64, testServerConfig } from "./testing/index.js";

const open: McpConnections[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((connections) => connections.close()));
});

async function connect(
  servers: Record<string, McpServerConfig>,
  options: ConnectMcpOptions = {},
): Promise<{ mcp: McpConnections; notices: McpNotice[] }> {
  const notices: McpNotice[] = [];
  const mcp = await connectMcpServers(servers, { ...options, onNotice: (notice) => notices.push(notice) });
  open.push(mcp);
  return { mcp, notices };
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt++) await new Promise((r) => setTimeout(r, 25));
}

describe("R-M1: connectMcpServers against the repo's McpServer test server (stdio)", () => {
  it("R-M1: a paginated tool list arrives whole, as mcp__test__* tools with their annotations mapped", async () => {
    const { mcp } = await connect({ test: testServerConfig("--page-size", "3", "--extra-tools", "5") });
    const names = mcp.tools.map((tool) => tool.name);
    // 9 tools + 5 extras, 3 a page: 5 pages.
    expect(names).toHaveLength(14);
    expect(names.slice(0, 3)).toEqual(["mcp__test__echo", "mcp__test__add_note", "mcp__test__image"]);
    expect(names.at(-1)).toBe("mcp__test__extra_4");
    const traits = (name: string) => {
      const tool = mcp.tools.find((each) => each.name === `mcp__test__${name}`)!;
      return [tool.isReadOnly({}), tool.isConcurrencySafe({})];
    };
    expect(traits("echo")).toEqual([true, true]); // readOnlyHint: true
    expect(traits("add_note")).toEqual([false, false]); // only destructiveHint: false
    expect(traits("fail")).toEqual([false, false]); // no annotations
    expect(mcp.status()).toEqual([{ name: "test", status: "connected", transport: "stdio", restarts: 0 }]);
  });

  it("R-M1: calls return the server's real results: text, images as image blocks, tool errors as is_error", async () => {
    const { mcp } = await connect({ test: testServerConfig() });
    expect(await callTool(mcp.tools, "mcp__test__echo", { text: "hello" })).toEqual({
      isError: false,
      content: [{ type: "text", text: "hello" }],
      text: "hello",
    });
    const image = await callTool(mcp.tools, "mcp__test__image", {});
    expect(image.content).toEqual([
      { type: "text", text: "a 1x1 png:" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: TEST_PNG_BASE64 } },
    ]);
    expect(await callTool(mcp.tools, "mcp__test__fail", {})).toMatchObject({
      isError: true,
      text: "the tool failed on purpose",
    });
    expect(await callTool(mcp.tools, "mcp__test__add_note", { note: "one" })).toMatchObject({
      text: "1 notes",
    });
  });

  it("R-M1: input is checked against the server's JSON Schema before the call reaches it", async () => {
    const { mcp } = await connect({ test: testServerConfig() });
    const bad = await callTool(mcp.tools, "mcp__test__add_note", { note: "" });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain("InputValidationError");
    expect(bad.text).toContain("at note");
    // Nothing was stored: the next note is the first.
    expect((await callTool(mcp.tools, "mcp__test__add_note", { note: "n" })).text).toBe("1 notes");
  });

  it("R-M1: MCP_TOOL_TIMEOUT cuts a slow call with an is_error; a server's own timeout wins; the server goes on", async () => {
    const limits = { ...DEFAULT_MCP_LIMITS, toolTimeoutMs: 300 };
    const { mcp } = await connect(
      { slowenv: testServerConfig(), own: { ...testServerConfig(), timeout: 200 } },
      { limits },
    );
    const cut = await callTool(mcp.tools, "mcp__slowenv__slow", { ms: 20_000 });
    expect(cut).toMatchObject({ isError: true });
    expect(cut.text).toBe(
      'MCP server "slowenv" tool "slow" timed out after 300 ms (MCP_TOOL_TIMEOUT, or the server\'s "timeout")',
    );
    expect((await callTool(mcp.tools, "mcp__own__slow", { ms: 20_000 })).text).toContain(
      "timed out after 200 ms",
    );
    expect((await callTool(mcp.tools, "mcp__slowenv__slow", { ms: 1 })).text).toBe("slept 1 ms");
  });

  it("R-M1: an interrupted call stops waiting for the server (R-L16)", async () => {
    const { mcp } = await connect({ test: testServerConfig() });
    const controller = new AbortController();
    const call = callTool(mcp.tools, "mcp__test__slow", { ms: 20_000 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await call).toMatchObject({
      isError: true,
      text: expect.stringContaining("stopped while running"),
    });
    expect((await callTool(mcp.tools, "mcp__test__echo", { text: "still here" })).text).toBe("still here");
  });

  it("R-M1: calls sharing one turn's signal leave no abort listener on it (the SDK's own stays on the call's signal)", async () => {
    const { mcp } = await connect({ test: testServerConfig() });
    const echo = mcp.tools.find((tool) => tool.name === "mcp__test__echo")!;
    const abortController = new AbortController();
    const context = testContext({ tools: mcp.tools, abortController });
    for (let index = 0; index < 12; index++) {
      await echo.call({ text: `call ${index}` }, { ...context, toolUseId: `toolu_${index}` });
    }
    expect(getEventListeners(abortController.signal, "abort")).toHaveLength(0);
  });

  it("R-M1: a name over 128 characters and a schema that does not compile are left out, with notices", async () => {
    const { mcp, notices } = await connect({ test: testServerConfig("--long-name", "--bad-schema") });
    expect(mcp.tools.map((tool) => tool.name)).not.toContain("mcp__test__bad_schema");
    expect(mcp.tools.every((tool) => tool.name.length <= 128)).toBe(true);
    expect(mcp.tools).toHaveLength(9);
    expect(notices).toEqual([
      {
        type: "tool_skipped",
        server: "test",
        tool: `long_${"x".repeat(120)}`,
        reason: `its name mcp__test__long_${"x".repeat(120)} is 136 characters; the API allows 128 (a shorter server name fixes it)`,
      },
      {
        type: "tool_skipped",
        server: "test",
        tool: "bad_schema",
        reason: expect.stringContaining("the input schema is not valid JSON Schema"),
      },
    ]);
  });

  it("R-M1: servers that fail to start are reported (status failed, reason, stderr) and the others start", async () => {
    const { mcp, notices } = await connect({
      good: testServerConfig(),
      exits: testServerConfig("--fail-start"),
      missing: { command: "/nonexistent/forkloop-mcp-server" },
    });
    const status = Object.fromEntries(mcp.status().map((each) => [each.name, each]));
    expect(status.good?.status).toBe("connected");
    expect(status.exits).toMatchObject({
      status: "failed",
      error: expect.stringContaining("refusing to start (--fail-start)"),
    });
    expect(status.missing).toMatchObject({ status: "failed", error: expect.stringContaining("ENOENT") });
    expect(notices.map((notice) => notice.type === "server_failed" && notice.server)).toEqual([
      "exits",
      "missing",
    ]);
    expect(mcp.tools.length).toBeGreaterThan(0);
    expect(mcp.tools.every((tool) => tool.name.startsWith("mcp__good__"))).toBe(true);
  });

  it("R-M1: servers start in parallel — three that each wait for the other two before answering all connect", async () => {
    const dir = mkdtempSync(join(tmpdir(), "forkloop-mcp-peers-"));
    try {
      const peer = testServerConfig("--peers", `${dir}:3`);
      const { mcp } = await connect(
        { a: peer, b: peer, c: peer },
        // Started one after another, the first would wait out this limit and fail.
        { limits: { ...DEFAULT_MCP_LIMITS, startupTimeoutMs: 10_000 } },
      );
      expect(mcp.status().map((each) => each.status)).toEqual(["connected", "connected", "connected"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("R-M1: MCP_TIMEOUT: a server that never answers initialize fails after the startup timeout", async () => {
    const { mcp } = await connect(
      { hangs: testServerConfig("--hang-start") },
      { limits: { ...DEFAULT_MCP_LIMITS, startupTimeoutMs: 1_000 } },
    );
    expect(mcp.status()[0]).toMatchObject({
      status: "failed",
      error: "did not start within 1000 ms (MCP_TIMEOUT)",
    });
    expect(mcp.tools).toEqual([]);
  });

  it("R-M1: a server killed mid-call → is_error, restarted once, later calls work; a second death leaves it stopped", async () => {
    const { mcp, notices } = await connect({ test: testServerConfig() });
    const firstPid = Number((await callTool(mcp.tools, "mcp__test__pid", {})).text);
    const crash = await callTool(mcp.tools, "mcp__test__crash", {});
    expect(crash.isError).toBe(true);
    expect(crash.text).toContain('MCP server "test" stopped during the call');
    expect(crash.text).toContain("it is being restarted");
    const secondPid = Number((await callTool(mcp.tools, "mcp__test__pid", {})).text);
    expect(secondPid).not.toBe(firstPid);
    expect(mcp.status()[0]).toMatchObject({ status: "connected", restarts: 1 });

    expect((await callTool(mcp.tools, "mcp__test__crash", {})).text).toContain(
      "restarted once already and stays stopped",
    );
    const after = await callTool(mcp.tools, "mcp__test__echo", { text: "x" });
    expect(after).toMatchObject({
      isError: true,
      text: expect.stringContaining('MCP server "test" is not running'),
    });
    expect(mcp.status()[0]).toMatchObject({ status: "failed", restarts: 1 });
    expect(notices.map((notice) => notice.type)).toEqual([
      "server_exited",
      "server_restarted",
      "server_exited",
    ]);
  });

  it("R-M1: close() ends every stdio server process", async () => {
    const { mcp } = await connect({ a: testServerConfig(), b: testServerConfig() });
    const pids = await Promise.all(
      ["a", "b"].map(async (name) => Number((await callTool(mcp.tools, `mcp__${name}__pid`, {})).text)),
    );
    expect(pids.every(processAlive)).toBe(true);
    await mcp.close();
    await until(() => !pids.some(processAlive));
    expect(pids.filter(processAlive)).toEqual([]);
  });

  it("R-M1: stdio servers inherit the environment, plus their own env, and run in the session's cwd", async () => {
    const { mcp } = await connect(
      { test: { ...testServerConfig(), env: { OWN_VAR: "own" } } },
      { env: { ...process.env, INHERITED_VAR: "inherited" } },
    );
    expect((await callTool(mcp.tools, "mcp__test__env", { name: "OWN_VAR" })).text).toBe("own");
    expect((await callTool(mcp.tools, "mcp__test__env", { name: "INHERITED_VAR" })).text).toBe("inherited");
  });

  it("R-M1: an in-process McpServer (type sdk, the SDK's createSdkMcpServer) connects over an in-memory transport", async () => {
    const server = new McpServer({ name: "inline", version: "1.0.0" });
    server.registerTool(
      "double",
      { description: "Doubles n.", inputSchema: { n: z.number() }, annotations: { readOnlyHint: true } },
      async ({ n }) => ({ content: [{ type: "text", text: String(n * 2) }] }),
    );
    const { mcp } = await connect({ inline: { type: "sdk", instance: server } });
    expect(mcp.status()).toEqual([{ name: "inline", status: "connected", transport: "sdk", restarts: 0 }]);
    expect((await callTool(mcp.tools, "mcp__inline__double", { n: 21 })).text).toBe("42");
    expect(mcp.tools[0]?.isConcurrencySafe({})).toBe(true);
  });
});
