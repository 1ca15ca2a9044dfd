import type { CacheSafeParams } from "@forkloop/loop-core";
import { mcpServerPrefix, toolNameMatches } from "@forkloop/tools";

/**
 * Tools that fork sub-agents are parent-side: a sub-agent may not fork again by default; nor
 * message the parent's background sub-agents (SendMessage, R-T5), which are not its own.
 */
const FORKING_TOOLS = new Set(["Agent", "Task", "Skill", "SendMessage"]);

function offeredNames(params: CacheSafeParams): string[] {
  return params.tools.flatMap((tool) => ("name" in tool ? [tool.name] : []));
}

/** Every tool of the parent's list but the forking ones (MCP tools included, as in Claude Code). */
export function defaultSubAgentTools(params: CacheSafeParams): string[] {
  return offeredNames(params).filter((name) => !FORKING_TOOLS.has(name));
}

/**
 * The tools a sub-agent may use (R-M1): `tools` (an agent definition's list, or the session's
 * default) or else `defaultSubAgentTools`, minus `disallowedTools`. Both take exact names and
 * Claude Code's MCP server forms, `mcp__server` and `mcp__server__*`, which stand for every tool
 * of that server in the parent's list.
 */
export function selectSubAgentTools(
  params: CacheSafeParams,
  lists: {
    readonly tools?: readonly string[] | undefined;
    readonly disallowedTools?: readonly string[] | undefined;
  },
): string[] {
  const offered = offeredNames(params);
  const chosen =
    lists.tools === undefined
      ? defaultSubAgentTools(params)
      : lists.tools.flatMap((pattern) =>
          mcpServerPrefix(pattern) === undefined
            ? [pattern]
            : offered.filter((name) => toolNameMatches(pattern, name)),
        );
  const excluded = lists.disallowedTools ?? [];
  return [...new Set(chosen)].filter((name) => !excluded.some((pattern) => toolNameMatches(pattern, name)));
}
