import type { Tool } from "@forkloop/loop-core";

type McpToolOrigin = NonNullable<Tool["mcpOrigin"]>;

/** One entry of an assistant line's `tool_use_meta`: how a client shows a tool call. */
interface ToolUseMetaEntry {
  readonly id: string;
  readonly display_name: string;
  readonly server_display_name?: string;
  readonly tool_name?: string;
}

/**
 * A readable name made from a tool's wire name, as Claude Code makes it: the part after the last
 * `__` (an MCP tool's own name), underscores as spaces, each word capitalised
 * (`mcp__weather__get_temperature` → `Get Temperature`).
 */
function readableToolName(name: string): string {
  return (name.split("__").pop() || name).replace(/_/g, " ").replace(/\b\w/g, (c) => c.toUpperCase());
}

/**
 * R-K2: the Agent SDK's `tool_use_meta` for the tool calls among `content`: an MCP tool's title
 * (else its readable name), its server's name and its own name; a call whose readable name is its
 * wire name (every built-in tool) has no entry. Undefined when no call has one, as the SDK omits it.
 */
export function toolUseMeta(
  content: readonly { readonly type: string; readonly id?: string; readonly name?: string }[],
  originOf: (toolName: string) => McpToolOrigin | undefined,
): ToolUseMetaEntry[] | undefined {
  const entries: ToolUseMetaEntry[] = [];
  for (const block of content) {
    if (block.type !== "tool_use" || block.id === undefined || block.name === undefined) continue;
    const origin = originOf(block.name);
    const displayName = origin?.title || readableToolName(block.name);
    if (displayName === block.name) continue;
    entries.push({
      id: block.id,
      display_name: displayName,
      ...(origin === undefined ? {} : { server_display_name: origin.serverName, tool_name: origin.toolName }),
    });
  }
  return entries.length > 0 ? entries : undefined;
}
