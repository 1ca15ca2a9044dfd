/**
 * Tool-name patterns of Claude Code's MCP forms (R-M1), used by permission rules and by
 * sub-agent tool lists alike: `mcp__server` and `mcp__server__*` stand for every tool of that
 * server, anything else for one exact name (`mcp__server__tool`, `Read`). Server names never
 * contain `__` (the MCP config refuses them), so the first `__` after `mcp__` ends the server name
 * and `mcp__a` cannot match a server `a__b`'s tools.
 */
export function mcpServerPrefix(pattern: string): string | undefined {
  if (!pattern.startsWith("mcp__")) return undefined;
  const server = pattern.endsWith("__*") ? pattern.slice(5, -3) : pattern.slice(5);
  if (server.length === 0 || server.includes("__") || server.includes("*")) return undefined;
  return `mcp__${server}__`;
}

/** Whether `pattern` (an exact name or an MCP server form) covers the tool `toolName`. */
export function toolNameMatches(pattern: string, toolName: string): boolean {
  const prefix = mcpServerPrefix(pattern);
  return prefix === undefined ? pattern === toolName : toolName.startsWith(prefix);
}
