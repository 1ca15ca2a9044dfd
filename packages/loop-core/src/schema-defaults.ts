import type { ToolUnion } from "./build-request.js";
import type { ToolUseBlock } from "./messages.js";

const defaultsCache = new WeakMap<ToolUnion, Readonly<Record<string, unknown>> | null>();

/**
 * The top-level defaults a tool's schema declares (Edit's `replace_all: false`), or null. An MCP
 * tool's (`mcp__…`) are left to its server, as Claude Code leaves them.
 */
function schemaDefaults(tool: ToolUnion): Readonly<Record<string, unknown>> | null {
  const cached = defaultsCache.get(tool);
  if (cached !== undefined) return cached;
  let defaults: Record<string, unknown> | null = null;
  const schema = "input_schema" in tool && !tool.name.startsWith("mcp__") ? tool.input_schema : undefined;
  const properties = (schema?.properties ?? {}) as Record<string, { default?: unknown } | undefined>;
  for (const [key, property] of Object.entries(properties)) {
    if (property?.default === undefined) continue;
    defaults ??= {};
    defaults[key] = property.default;
  }
  defaultsCache.set(tool, defaults);
  return defaults;
}

/**
 * R-X1: a tool call's input gets its schema's defaults for the fields the model left out, in
 * place, before anyone prints, stores, hooks or re-sends it — Claude Code 2.1.332 prints, asks
 * about and sends back `{"replace_all": false, …}` for an Edit the model wrote without it, and
 * scripts reading stream-json or permission_denials see that shape. The defaults come first, as
 * in Claude Code's.
 */
export function fillSchemaDefaults(block: ToolUseBlock, tools: readonly ToolUnion[]): void {
  const tool = tools.find((candidate) => "name" in candidate && candidate.name === block.name);
  const defaults = tool ? schemaDefaults(tool) : null;
  if (!defaults) return;
  const input = block.input as Record<string, unknown>;
  const missing = Object.keys(defaults).filter((key) => !(key in input));
  if (missing.length === 0) return;
  block.input = { ...Object.fromEntries(missing.map((key) => [key, defaults[key]])), ...input };
}
