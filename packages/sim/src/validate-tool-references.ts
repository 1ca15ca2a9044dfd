import { type ApiError, invalidRequest } from "./api-error.js";
import type { CountTokensRequest } from "./request-schema.js";

/**
 * A `tool_reference` block in a tool_result (a custom tool search's answer, which loads the
 * deferred tool it names — tool search tool page,
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool) must name a tool
 * of the request's `tools` (R-D2). The 400's wording is the API's as Claude Code users report it
 * ("Tool reference 'DesignSync' not found in available tools", anthropics/claude-code#81863 —
 * the API set no error_code there).
 */
export function checkToolReferences(body: CountTokensRequest): ApiError | null {
  const names = new Set(
    ((body.tools ?? []) as readonly { name?: unknown }[])
      .map((tool) => tool.name)
      .filter((name): name is string => typeof name === "string"),
  );
  for (const message of body.messages) {
    if (typeof message.content === "string") continue;
    for (const block of message.content) {
      if (block.type !== "tool_result" || !Array.isArray(block.content)) continue;
      for (const inner of block.content) {
        if (inner.type === "tool_reference" && !names.has(inner.tool_name)) {
          return invalidRequest(`Tool reference '${inner.tool_name}' not found in available tools`);
        }
      }
    }
  }
  return null;
}
