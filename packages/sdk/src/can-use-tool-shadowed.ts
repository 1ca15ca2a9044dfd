import type { Options } from "./options.js";

/**
 * A bare `allowedTools` entry (a tool's name, no rule in parentheses) allows every call of that
 * tool before `canUseTool` is asked, so the callback never sees it. The Agent SDK says so once per
 * `query()` with a process warning of this code; forkloop says the same.
 */
export function warnCanUseToolShadowed(options: Options): void {
  if (options.canUseTool === undefined) return;
  const bare = (options.allowedTools ?? []).filter((entry) => !entry.includes("("));
  if (bare.length === 0) return;
  process.emitWarning(
    `canUseTool will not be invoked for: ${bare.join(", ")}. Bare allowedTools entries auto-approve the whole tool before the callback is consulted. To gate every tool call, use a PreToolUse hook; or remove the bare names from allowedTools so they fall through to canUseTool. Allow rules from settings files can also shadow the callback but are not visible here.`,
    { code: "CLAUDE_SDK_CAN_USE_TOOL_SHADOWED" },
  );
}
