import {
  type CacheSafeParams,
  createAgentState,
  type PermissionMode,
  type Tool,
  type ToolAnnotations,
  type ToolUseContext,
} from "@forkloop/loop-core";
import { z } from "zod";
import type { ParentToolHandler } from "./sub-agent-types.js";

/**
 * Tools that run in this process for sub-agents too (R-F2 `callbacks`): MCP tools, a nested
 * `Agent`, any tool of the session that is not a worker built-in. A sub-agent's call comes back
 * over comlink, is validated against the tool's own schema (the worker's proxy only had its JSON)
 * and runs here; the result crosses back as it is, images included (R-M1).
 */
export function parentToolHandler(
  tools: readonly Tool[],
  context: ToolUseContext,
  abortController: AbortController,
): ParentToolHandler {
  return async (toolName, input, callOptions) => {
    const tool = tools.find((each) => each.name === toolName || each.aliases?.includes(toolName));
    if (tool === undefined) return { content: `${toolName} is not available in a sub-agent`, isError: true };
    const parsed = tool.inputSchema.safeParse(input);
    if (!parsed.success) {
      return { content: `InputValidationError: ${z.prettifyError(parsed.error)}`, isError: true };
    }
    const result = await tool.call(parsed.data, {
      ...context,
      agentId: callOptions.agentId,
      toolUseId: callOptions.toolUseId,
      abortController,
    });
    return { content: result.content, isError: result.isError === true };
  };
}

/**
 * The annotations of the parent-side tools a fork is sent (R-M1): the worker's proxies answer
 * isReadOnly/isConcurrencySafe from them, as the real tools do, so an MCP tool's read-only hint
 * holds in a sub-agent's plan mode and its concurrency.
 */
export function parentToolAnnotations(
  tools: readonly Tool[],
  params: CacheSafeParams,
): Record<string, ToolAnnotations> | undefined {
  const offered = new Set(params.tools.flatMap((tool) => ("name" in tool ? [tool.name] : [])));
  const entries = tools.flatMap((tool) =>
    tool.annotations !== undefined && offered.has(tool.name) ? [[tool.name, tool.annotations] as const] : [],
  );
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}

/**
 * Parent-side tools for sub-agents no session loop owns (a batch's items, R-M1): the tools
 * run in this process with a context of their own, rooted at `cwd`. `abort()` stops calls still
 * running (the batch is interrupted or ends).
 */
export function detachedParentTools(
  tools: readonly Tool[],
  options: { readonly cwd: string; readonly model: string; readonly permissionMode: PermissionMode },
): { readonly callTool: ParentToolHandler; abort(reason: string): void } {
  const abortController = new AbortController();
  const context: ToolUseContext = {
    cwd: options.cwd,
    workspaceRoots: [options.cwd],
    tools,
    abortController,
    agentId: "main",
    agentState: createAgentState(),
    options: { model: options.model, permissionMode: options.permissionMode },
  };
  return {
    callTool: parentToolHandler(tools, context, abortController),
    abort: (reason) => abortController.abort(reason),
  };
}
