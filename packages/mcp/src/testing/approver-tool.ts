import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/**
 * The test server's `approve` tool (`--approver JSON`): a permission-prompt tool as Claude Code's
 * `--permission-prompt-tool` calls one — `{tool_name, input, tool_use_id}` in, one text block
 * holding `{behavior: "allow", updatedInput} | {behavior: "deny", message}` out.
 *
 * JSON is `{"replies": {TOOL: REPLY}, "log": DIR}`. A REPLY of `"allow"` allows with the input as
 * given; an object is answered as its JSON; any other string is answered as is (a reply that is
 * not a permission result). A tool with no reply is denied. With `log`, each call's arguments are
 * written to DIR as one JSON file named by the wall clock in nanoseconds, so they sort among the
 * conformance harness's hook inputs (`hook_event_name` is `mcp:approve`).
 */
export interface ApproverConfig {
  readonly replies: Readonly<Record<string, unknown>>;
  readonly log?: string;
}

export const APPROVER_SHAPE = {
  tool_name: z.string(),
  input: z.record(z.string(), z.unknown()),
  tool_use_id: z.string().optional(),
};

export function approverReply(config: ApproverConfig, args: Record<string, unknown>): CallToolResult {
  if (config.log !== undefined) {
    const nanos = `${Date.now()}${String(process.hrtime.bigint() % 1_000_000n).padStart(6, "0")}`;
    writeFileSync(
      join(config.log, `${nanos}-${process.pid}.json`),
      JSON.stringify({ hook_event_name: "mcp:approve", ...args }),
    );
  }
  const toolName = String(args.tool_name);
  const reply = config.replies[toolName];
  const text =
    reply === undefined
      ? JSON.stringify({ behavior: "deny", message: `${toolName} is not among the approver's replies` })
      : reply === "allow"
        ? JSON.stringify({ behavior: "allow", updatedInput: args.input })
        : typeof reply === "string"
          ? reply
          : JSON.stringify(reply);
  return { content: [{ type: "text", text }] };
}
