import { annotationTraits, type PermissionMode, type Tool } from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createPermissionChecker, type PermissionRules } from "./permission-checker.js";
import { parsePermissionRule } from "./permission-rules.js";
import { mcpServerPrefix, toolNameMatches } from "./tool-name-patterns.js";

/** MCP tools as @forkloop/mcp makes them: static traits from the server's annotations. */
function mcpTool(name: string, readOnlyHint?: boolean): Tool {
  return {
    name,
    description: name,
    inputSchema: z.object({}).loose(),
    ...(readOnlyHint === undefined ? {} : { annotations: { readOnlyHint } }),
    ...annotationTraits(readOnlyHint === undefined ? undefined : { readOnlyHint }),
    maxResultSizeChars: Number.POSITIVE_INFINITY,
    call: async () => ({ content: "" }),
  };
}

const tools = [
  mcpTool("mcp__memory__read_graph", true),
  mcpTool("mcp__memory__create_entities"),
  mcpTool("mcp__memory_b__read_graph", true),
  mcpTool("mcp__files__write_file", false),
];

async function decide(mode: PermissionMode, toolName: string, rules: Partial<PermissionRules> = {}) {
  const checker = createPermissionChecker({ mode, rules: { allow: [], ask: [], deny: [], ...rules }, tools });
  const decision = await checker(
    toolName,
    {},
    { signal: new AbortController().signal, toolUseId: "t", agentId: "main" },
  );
  return decision.behavior === "allow" ? "allow" : decision.message;
}

describe("R-M1: tool-name patterns mcp__server, mcp__server__*, exact names", () => {
  it.each([
    ["mcp__memory", "mcp__memory__read_graph", true],
    ["mcp__memory__*", "mcp__memory__create_entities", true],
    ["mcp__memory", "mcp__memory_b__read_graph", false], // another server, not a longer name
    ["mcp__memory__read_graph", "mcp__memory__read_graph", true],
    ["mcp__memory__read_graph", "mcp__memory__read_graph_2", false],
    ["mcp__memory__read*", "mcp__memory__read_graph", false], // no other wildcards
    ["Read", "Read", true],
    ["mcp__", "mcp__memory__read_graph", false],
  ])("R-M1: %s covers %s: %s", (pattern, name, expected) => {
    expect(toolNameMatches(pattern, name)).toBe(expected);
  });

  it("R-M1: the server form has a prefix; an exact tool name has none", () => {
    expect(mcpServerPrefix("mcp__db")).toBe("mcp__db__");
    expect(mcpServerPrefix("mcp__db__*")).toBe("mcp__db__");
    expect(mcpServerPrefix("mcp__db__query")).toBeUndefined();
    expect(parsePermissionRule("mcp__db__*")).toEqual({ raw: "mcp__db__*", toolName: "mcp__db" });
    expect(parsePermissionRule("mcp__db__q*")).toHaveProperty("error");
  });
});

describe("R-M1: permission rules on MCP tools", () => {
  it("R-M1: deny mcp__memory denies every memory tool, in every mode, and no other server's", async () => {
    for (const rule of ["mcp__memory", "mcp__memory__*"]) {
      for (const mode of ["default", "bypassPermissions", "plan"] as const) {
        expect(await decide(mode, "mcp__memory__read_graph", { deny: [rule] })).toContain(`deny: ${rule}`);
      }
      expect(await decide("bypassPermissions", "mcp__memory_b__read_graph", { deny: [rule] })).toBe("allow");
    }
  });

  it("R-M1: MCP tools need permission unless allowed; read-only annotated ones follow the mode's read-only policy", async () => {
    // default: read-only (readOnlyHint) runs, the rest asks (no one to ask → denied in Claude Code's words).
    expect(await decide("default", "mcp__memory__read_graph")).toBe("allow");
    expect(await decide("default", "mcp__memory__create_entities")).toBe(
      "Claude requested permissions to use mcp__memory__create_entities, but you haven't granted it yet.",
    );
    expect(await decide("default", "mcp__memory__create_entities", { allow: ["mcp__memory"] })).toBe("allow");
    expect(
      await decide("default", "mcp__memory__create_entities", { allow: ["mcp__memory__create_entities"] }),
    ).toBe("allow");
    expect(await decide("default", "mcp__files__write_file", { allow: ["mcp__memory__*"] })).toContain(
      "you haven't granted it yet",
    );
    // plan: only read-only tools, even with an allow rule; dontAsk: only what is allowed or read-only.
    expect(await decide("plan", "mcp__memory__read_graph")).toBe("allow");
    expect(await decide("plan", "mcp__memory__create_entities", { allow: ["mcp__memory"] })).toContain(
      "Plan mode",
    );
    expect(await decide("dontAsk", "mcp__files__write_file")).toContain("dontAsk mode denies");
    expect(await decide("acceptEdits", "mcp__files__write_file")).toContain("you haven't granted it yet");
  });

  it("R-M1: an ask rule on a server asks even for its read-only tools", async () => {
    expect(await decide("default", "mcp__memory__read_graph", { ask: ["mcp__memory"] })).toBe(
      "Claude requested permissions to use mcp__memory__read_graph, but you haven't granted it yet.",
    );
  });
});
