import { describe, expect, it } from "vitest";
import { defaultSubAgentTools, selectSubAgentTools } from "./sub-agent-tool-selection.js";
import { testCacheSafeParams } from "./testing/index.js";

const names = [
  "Agent",
  "Bash",
  "Read",
  "Skill",
  "mcp__db__query",
  "mcp__db__schema",
  "mcp__dbx__query",
  "mcp__mem__read",
];
const params = {
  ...testCacheSafeParams(),
  tools: names.map((name) => ({ name, description: name, input_schema: { type: "object" as const } })),
};

describe("R-M1: which tools a sub-agent gets (mcp__server, mcp__server__*, exact names)", () => {
  it("R-M1: by default, everything but the forking tools, MCP tools included", () => {
    expect(defaultSubAgentTools(params)).toEqual(names.filter((name) => !["Agent", "Skill"].includes(name)));
  });

  it.each([
    [{ tools: ["Read", "mcp__db"] }, ["Read", "mcp__db__query", "mcp__db__schema"]],
    [{ tools: ["mcp__db__*"] }, ["mcp__db__query", "mcp__db__schema"]],
    [{ tools: ["mcp__db__schema"] }, ["mcp__db__schema"]],
    [{ disallowedTools: ["mcp__db"] }, ["Bash", "Read", "mcp__dbx__query", "mcp__mem__read"]],
    [
      { disallowedTools: ["mcp__db__query", "Bash"] },
      ["Read", "mcp__db__schema", "mcp__dbx__query", "mcp__mem__read"],
    ],
    [
      { tools: ["mcp__db", "mcp__mem"], disallowedTools: ["mcp__db__schema"] },
      ["mcp__db__query", "mcp__mem__read"],
    ],
    [{ tools: ["mcp__none"] }, []],
  ])("R-M1: %j → %j", (lists, expected) => {
    expect(selectSubAgentTools(params, lists)).toEqual(expected);
  });
});
