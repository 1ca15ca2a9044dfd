import { describe, expect, it } from "vitest";
import { spreadMcpConfigArgs } from "./mcp-config-args.js";

const json = '{"mcpServers":{}}';

describe("R-M1: --mcp-config <configs...> as Claude Code takes it", () => {
  it.each([
    [
      ["--mcp-config", "a.json", "b.json"],
      ["--mcp-config", "a.json", "--mcp-config", "b.json"],
    ],
    [
      ["--mcp-config", "a.json", json, "Fix the bug"],
      ["--mcp-config", "a.json", "--mcp-config", json, "Fix the bug"],
    ],
    [
      ["--mcp-config=a.json", "B.JSON", "-p"],
      ["--mcp-config=a.json", "--mcp-config", "B.JSON", "-p"],
    ],
    // The flag's own value is whatever follows it; only further values must look like configs.
    [
      ["--mcp-config", "servers.conf", "Fix it"],
      ["--mcp-config", "servers.conf", "Fix it"],
    ],
    [
      ["--mcp-config", "a.json", "--", "b.json"],
      ["--mcp-config", "a.json", "--", "b.json"],
    ],
    [
      ["--verbose", "b.json"],
      ["--verbose", "b.json"],
    ],
  ])("%j → %j", (argv, expected) => {
    expect(spreadMcpConfigArgs(argv)).toEqual(expected);
  });
});
