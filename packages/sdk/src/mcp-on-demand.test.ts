import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { McpServerEntry } from "@forkloop/mcp";
import { callTool, TEST_SERVER_PATH, testServerConfig } from "@forkloop/mcp/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpServersOnDemand } from "./mcp-on-demand.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-mcp-on-demand-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const entry = (name: string, ...flags: string[]): McpServerEntry => ({
  name,
  config: testServerConfig(...flags),
  source: { scope: "flag" },
});

/** Running test-server processes whose arguments include `arg`. */
function testServersWith(arg: string): string[] {
  return readdirSync("/proc").filter((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      return args.includes(TEST_SERVER_PATH) && args.includes(arg);
    } catch {
      return false; // it ended while we looked
    }
  });
}

function servers(entries: readonly McpServerEntry[], warnings: string[] = []) {
  return mcpServersOnDemand(entries, {
    cwd: dir,
    env: process.env,
    resultsDir: join(dir, "mcp-results"),
    warn: (line) => warnings.push(line),
  });
}

describe("mcpServersOnDemand (R-M1, R-B1: a worker's own MCP servers)", () => {
  it("R-B1, R-M1: starts a server only when a batch names it, once for every later batch (one process), and ends it on close", async () => {
    const mcp = servers([entry("test"), entry("other", "--extra-tools", "37")]);
    expect(mcp.names).toEqual(["test", "other"]);
    const [first, second] = await Promise.all([mcp.serversFor(["test"]), mcp.serversFor(["test", "test"])]);
    expect(first.unavailable).toEqual([]);
    expect(first.tools.every((tool) => tool.name.startsWith("mcp__test__"))).toBe(true);
    const pid = (await callTool(first.tools, "mcp__test__pid", {})).text;
    expect(pid).toMatch(/^\d+$/);
    expect((await callTool(second.tools, "mcp__test__pid", {})).text).toBe(pid);
    const later = await mcp.serversFor(["test"]);
    expect((await callTool(later.tools, "mcp__test__pid", {})).text).toBe(pid);
    expect(testServersWith("37")).toEqual([]); // "other": configured, never named, never started
    await mcp.close();
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    await expect(mcp.serversFor(["test"])).rejects.toThrow(/closed/);
  });

  it("R-B1, R-M1: a server not configured, or one that fails to start (tried again by the next batch), is unavailable with the reason", async () => {
    const warnings: string[] = [];
    const mcp = servers([entry("broken", "--fail-start"), entry("test")], warnings);
    try {
      const asked = await mcp.serversFor(["db", "broken", "test"]);
      expect(asked.unavailable).toEqual([
        { name: "db", reason: "not_configured" },
        {
          name: "broken",
          reason: "failed",
          error: expect.stringContaining("refusing to start (--fail-start)"),
        },
      ]);
      expect(asked.tools.length).toBeGreaterThan(0);
      expect(asked.tools.every((tool) => tool.name.startsWith("mcp__test__"))).toBe(true);
      await mcp.serversFor(["broken"]);
      expect(warnings.filter((line) => line.includes('MCP server "broken" failed'))).toHaveLength(2);
    } finally {
      await mcp.close();
    }
  });
});
