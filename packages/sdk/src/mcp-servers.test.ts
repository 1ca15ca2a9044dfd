import { describe, expect, it } from "vitest";
import { namedMcpServers, type ResolvedMcpServers } from "./mcp-servers.js";

describe("namedMcpServers (R-M1, R-B1: what a queued batch stores of its MCP config)", () => {
  const resolved: ResolvedMcpServers = {
    entries: [
      { name: "db", config: { command: "db-server", args: ["--token", "t0ken"] }, source: { scope: "flag" } },
      { name: "tracker.io", config: { type: "http", url: "https://x.test/mcp" }, source: { scope: "flag" } },
      { name: "files", config: { type: "sse", url: "https://y.test/sse" }, source: { scope: "user" } },
    ],
  };

  it("R-B1, R-M1: names and transports only — no command, args, URL — and no server a bare deny rule removes whole", () => {
    const named = namedMcpServers(resolved, ["mcp__files__*", "mcp__db__drop", "mcp__tracker_io(x)"]);
    expect(named).toEqual([
      { name: "db", transport: "stdio" },
      { name: "tracker.io", transport: "http" },
    ]);
    expect(namedMcpServers(resolved, ["mcp__tracker_io"]).map((server) => server.name)).toEqual([
      "db",
      "files",
    ]);
  });
});
