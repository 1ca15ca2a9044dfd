import { describe, expect, it } from "vitest";
import {
  MAX_TOOL_NAME_LENGTH,
  mcpToolName,
  mcpToolPrefix,
  normalizeMcpName,
  toolNameProblem,
} from "./tool-names.js";

describe("R-M1: mcp__<server>__<tool> names", () => {
  it.each([
    ["memory", "read_graph", "mcp__memory__read_graph"],
    ["my server.v2", "get-sum", "mcp__my_server_v2__get-sum"],
    ["db", "tables/list", "mcp__db__tables_list"],
    ["ünï", "a.b", "mcp___n___a_b"],
  ])("R-M1: server %j, tool %j → %s", (server, tool, expected) => {
    expect(mcpToolName(server, tool)).toBe(expected);
    expect(expected).toMatch(/^[a-zA-Z0-9_-]{1,128}$/);
  });

  it("R-M1: the prefix is what rules like mcp__server__* match", () => {
    expect(mcpToolPrefix("my.db")).toBe("mcp__my_db__");
    expect(normalizeMcpName("a b/c")).toBe("a_b_c");
  });

  it("R-M1: a full name over 128 characters is refused with a message; 128 is allowed", () => {
    const fits = `mcp__s__${"x".repeat(MAX_TOOL_NAME_LENGTH - 8)}`;
    expect(fits).toHaveLength(128);
    expect(toolNameProblem(fits)).toBeUndefined();
    expect(toolNameProblem(`${fits}y`)).toBe(
      `its name ${fits}y is 129 characters; the API allows 128 (a shorter server name fixes it)`,
    );
  });
});
