/** The Messages API's tool-name pattern is `^[a-zA-Z0-9_-]{1,128}$`. */
export const MAX_TOOL_NAME_LENGTH = 128;

/** Claude Code's rule: every character outside `[A-Za-z0-9_-]` becomes `_`. */
export function normalizeMcpName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_");
}

/** `mcp__<server>__`: what every tool name of the server starts with (permission rules use it). */
export function mcpToolPrefix(serverName: string): string {
  return `mcp__${normalizeMcpName(serverName)}__`;
}

/** `mcp__<server>__<tool>`, both parts normalised; may be longer than the API allows (see below). */
export function mcpToolName(serverName: string, toolName: string): string {
  return `${mcpToolPrefix(serverName)}${normalizeMcpName(toolName)}`;
}

/** Why a full tool name cannot be offered to the model, or undefined when it can. */
export function toolNameProblem(fullName: string): string | undefined {
  if (fullName.length <= MAX_TOOL_NAME_LENGTH) return undefined;
  return `its name ${fullName} is ${fullName.length} characters; the API allows ${MAX_TOOL_NAME_LENGTH} (a shorter server name fixes it)`;
}
