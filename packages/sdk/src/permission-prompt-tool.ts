import {
  createAgentState,
  type CanUseTool as LoopCanUseTool,
  lazySchema,
  type PermissionDecision,
  type Tool,
  type ToolResult,
} from "@forkloop/loop-core";
import { z } from "zod";
import { OptionsError } from "./options-error.js";

/**
 * R-X3 `permissionPromptToolName` (`claude -p --permission-prompt-tool NAME`): an MCP tool answers
 * each permission prompt the rules and the mode leave open, as Claude Code asks one — called with
 * `{tool_name, input, tool_use_id}`, answering one text block that holds
 * `{behavior: "allow", updatedInput?}` or `{behavior: "deny", message}`. The tool is not offered
 * to the model (Claude Code hides it too: the model must not answer its own prompts).
 */
export function permissionPromptTool(name: string, tools: readonly Tool[]): Tool {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!name.startsWith("mcp__")) {
    throw new OptionsError(
      `tool ${name} (passed via --permission-prompt-tool) must be an MCP tool: give the mcp__<server>__<tool> name of a tool an --mcp-config server offers.`,
    );
  }
  if (tool === undefined) {
    const available = tools.filter((candidate) => candidate.name.startsWith("mcp__")).map((t) => t.name);
    // Claude Code's words (it says them at the first prompt; forkloop before the first request).
    throw new OptionsError(
      `MCP tool ${name} (passed via --permission-prompt-tool) not found. Available MCP tools: ${available.join(", ") || "none"}. Name one of them, or add the server that offers it with --mcp-config.`,
    );
  }
  return tool;
}

/** What Claude Code answers when the tool's reply is not a permission result (its words). */
export const INVALID_PERMISSION_RESULT =
  "The permission prompt tool returned an invalid permission result. Expected {behavior: 'allow', updatedInput?: object} or {behavior: 'deny', message: string}. updatedPermissions may hold at most 4096 updates, rules and directories in all.";

const permissionResult = lazySchema(() =>
  z.union([
    z.object({
      behavior: z.literal("allow"),
      updatedInput: z.record(z.string(), z.unknown()).optional(),
      updatedPermissions: z.array(z.unknown()).max(4096).optional(),
    }),
    z.object({ behavior: z.literal("deny"), message: z.string(), interrupt: z.boolean().optional() }),
  ]),
);

/** The permission checker's ask caller that asks `tool`. */
export function promptToolAsk(tool: Tool, cwd: string): LoopCanUseTool {
  return async (toolName, input, options) => {
    const abortController = new AbortController();
    const stop = () => abortController.abort(options.signal.reason);
    options.signal.addEventListener("abort", stop, { once: true });
    let result: ToolResult;
    try {
      result = await tool.call(
        { tool_name: toolName, input, tool_use_id: options.toolUseId },
        {
          cwd,
          workspaceRoots: [cwd],
          tools: [],
          abortController,
          agentId: options.agentId,
          agentState: createAgentState(),
          options: { model: "", permissionMode: "default" },
          toolUseId: options.toolUseId,
        },
      );
    } finally {
      options.signal.removeEventListener("abort", stop);
    }
    if (options.signal.aborted) return { behavior: "deny", message: "Permission prompt was aborted." };
    return decisionOf(result);
  };
}

/**
 * A reply that is not a permission result: refused by the check itself, not by the user (R-K2,
 * Claude Code's tool_result_meta: source config, reason other).
 */
const INVALID: PermissionDecision = {
  behavior: "deny",
  message: INVALID_PERMISSION_RESULT,
  decidedBy: { source: "config", reasonType: "other" },
};

/** The tool's reply as a decision: one text block of JSON, else Claude Code's invalid-result denial. */
function decisionOf(result: ToolResult): PermissionDecision {
  const blocks =
    typeof result.content === "string" ? [{ type: "text", text: result.content }] : result.content;
  const first = blocks[0];
  if (result.isError === true || first?.type !== "text") {
    return INVALID;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(first.text);
  } catch {
    return INVALID;
  }
  const reply = permissionResult.safeParse(parsed);
  if (!reply.success) return INVALID;
  if (reply.data.behavior === "deny") {
    return reply.data.interrupt === true
      ? { behavior: "deny", message: reply.data.message, interrupt: true }
      : { behavior: "deny", message: reply.data.message };
  }
  return reply.data.updatedInput === undefined
    ? { behavior: "allow" }
    : { behavior: "allow", updatedInput: reply.data.updatedInput };
}
