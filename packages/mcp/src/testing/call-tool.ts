import {
  type ContentBlockParam,
  runToolUse,
  type Tool,
  type ToolResultBlockParam,
  type ToolUseBlock,
  type UserMessage,
} from "@forkloop/loop-core";
import { testContext } from "@forkloop/loop-core/testing";
import type { McpConnections } from "../connect-mcp-servers.js";

export interface CallOutcome {
  readonly isError: boolean;
  readonly content: string | readonly ContentBlockParam[];
  /** The text of the result (text blocks joined). */
  readonly text: string;
}

/**
 * Calls one tool through loop-core's real tool pipeline (validation, permission, call, caps),
 * as the loop does, with every permission granted.
 */
export async function callTool(
  tools: McpConnections["tools"] | readonly Tool[],
  name: string,
  input: Record<string, unknown>,
  options: { signal?: AbortSignal } = {},
): Promise<CallOutcome> {
  const abortController = new AbortController();
  options.signal?.addEventListener("abort", () => abortController.abort("interrupt"), { once: true });
  const block = { type: "tool_use", id: `toolu_${crypto.randomUUID()}`, name, input } as ToolUseBlock;
  const outcome = await runToolUse(block, null, {
    context: testContext({ tools, abortController }),
    canUseTool: async () => ({ behavior: "allow" }),
    hooks: undefined,
    uuid: () => crypto.randomUUID(),
  });
  const result = (outcome.message as UserMessage).message.content[0] as ToolResultBlockParam;
  const content = (result.content ?? "") as string | ContentBlockParam[];
  const text =
    typeof content === "string"
      ? content
      : content.map((block) => (block.type === "text" ? block.text : "")).join("");
  return { isError: result.is_error === true, content, text };
}
