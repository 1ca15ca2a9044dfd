/** Timeouts and output caps, as Claude Code reads them from the environment. */
export interface McpLimits {
  /** `MCP_TIMEOUT`: connecting and listing tools, per server (ms). */
  readonly startupTimeoutMs: number;
  /** `MCP_TOOL_TIMEOUT`: one tool call (ms); a server's own `timeout` wins. */
  readonly toolTimeoutMs: number;
  /** `MAX_MCP_OUTPUT_TOKENS`: larger results are saved to a file, or refused when they cannot be. */
  readonly maxOutputTokens: number;
}

export const DEFAULT_MCP_LIMITS: McpLimits = {
  startupTimeoutMs: 30_000,
  // Claude Code's default: effectively no limit (27.8 hours), since tools may run long on purpose.
  toolTimeoutMs: 100_000_000,
  maxOutputTokens: 25_000,
};

/** Results above this many tokens are reported as a warning (Claude Code's threshold). */
export const OUTPUT_WARNING_TOKENS = 10_000;
/** Successful non-image results above this many characters are saved to a file (Claude Code's rule). */
export const SAVE_TO_FILE_CHARS = 50_000;
/** setTimeout turns anything above 2^31-1 ms into 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const VARIABLES = {
  MCP_TIMEOUT: "startupTimeoutMs",
  MCP_TOOL_TIMEOUT: "toolTimeoutMs",
  MAX_MCP_OUTPUT_TOKENS: "maxOutputTokens",
} as const satisfies Record<string, keyof McpLimits>;

export type McpLimitsResult =
  | { readonly ok: true; readonly limits: McpLimits }
  | { readonly ok: false; readonly error: string };

/** The limits from `MCP_TIMEOUT`, `MCP_TOOL_TIMEOUT` and `MAX_MCP_OUTPUT_TOKENS`; a bad value is an error. */
export function mcpLimitsFromEnv(env: Readonly<Record<string, string | undefined>>): McpLimitsResult {
  const limits: Record<keyof McpLimits, number> = { ...DEFAULT_MCP_LIMITS };
  for (const [variable, key] of Object.entries(VARIABLES)) {
    const text = env[variable];
    if (text === undefined || text.trim() === "") continue;
    const value = Number(text);
    if (!Number.isInteger(value) || value <= 0) {
      const unit = key === "maxOutputTokens" ? "tokens" : "milliseconds";
      return {
        ok: false,
        error: `${variable}=${text} is not a positive whole number of ${unit}. Fix: set it like ${variable}=${DEFAULT_MCP_LIMITS[key]} or unset it.`,
      };
    }
    limits[key] = value;
  }
  return { ok: true, limits };
}

/** A timeout safe to hand to setTimeout. */
export function timerMs(ms: number): number {
  return Math.min(ms, MAX_TIMER_MS);
}
