import { describe, expect, it } from "vitest";
import { DEFAULT_MCP_LIMITS, mcpLimitsFromEnv } from "./mcp-limits.js";

describe("R-M1: MCP_TIMEOUT, MCP_TOOL_TIMEOUT, MAX_MCP_OUTPUT_TOKENS", () => {
  it("R-M1: defaults are Claude Code's: 25,000 output tokens, 30 s to start", () => {
    expect(mcpLimitsFromEnv({})).toEqual({ ok: true, limits: DEFAULT_MCP_LIMITS });
    expect(DEFAULT_MCP_LIMITS).toMatchObject({ maxOutputTokens: 25_000, startupTimeoutMs: 30_000 });
  });

  it("R-M1: each variable sets its limit", () => {
    expect(
      mcpLimitsFromEnv({ MCP_TIMEOUT: "5000", MCP_TOOL_TIMEOUT: "250", MAX_MCP_OUTPUT_TOKENS: "900" }),
    ).toEqual({
      ok: true,
      limits: { startupTimeoutMs: 5000, toolTimeoutMs: 250, maxOutputTokens: 900 },
    });
  });

  it.each(["abc", "-5", "1.5", "0"])("R-M1: MCP_TOOL_TIMEOUT=%s is an error with the fix", (value) => {
    expect(mcpLimitsFromEnv({ MCP_TOOL_TIMEOUT: value })).toEqual({
      ok: false,
      error: `MCP_TOOL_TIMEOUT=${value} is not a positive whole number of milliseconds. Fix: set it like MCP_TOOL_TIMEOUT=100000000 or unset it.`,
    });
  });
});
