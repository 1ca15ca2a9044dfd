import { type ApiError, invalidRequest } from "./api-error.js";
import type { CountTokensRequest } from "./request-schema.js";

/**
 * Rules over a request's tools taken together (R-D2):
 * - Tool search tool page (https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool):
 *   "All tools have defer_loading set. At least one tool must be non-deferred." is the 400 when
 *   every tool is deferred (the page's wording), and the tool search tool itself must never be
 *   deferred (a 400; wording UNCONFIRMED).
 * - MCP connector page (https://platform.claude.com/docs/en/agents-and-tools/mcp-connector):
 *   every server in `mcp_servers` is referenced by exactly one `mcp_toolset` in `tools`, and a
 *   toolset names a server of `mcp_servers` (400s). An unreferenced server gets the API's sentence
 *   (below); the wordings for two toolsets on one server and for an unknown server are UNCONFIRMED.
 */
export function checkToolSets(body: CountTokensRequest): ApiError | null {
  const tools = (body.tools ?? []) as readonly Record<string, unknown>[];
  if (tools.length > 0 && tools.every((tool) => tool.defer_loading === true)) {
    return invalidRequest("All tools have defer_loading set. At least one tool must be non-deferred.");
  }
  for (const [index, tool] of tools.entries()) {
    if (
      typeof tool.type === "string" &&
      tool.type.startsWith("tool_search_tool_") &&
      tool.defer_loading === true
    ) {
      return invalidRequest(`tools.${index}: the tool search tool cannot have defer_loading set`);
    }
  }
  const servers = ((body as { mcp_servers?: readonly { name?: unknown }[] | null }).mcp_servers ?? []).map(
    (server) => server.name,
  );
  const toolsets = tools
    .map((tool, index) => ({ tool, index }))
    .filter(({ tool }) => tool.type === "mcp_toolset");
  for (const { tool, index } of toolsets) {
    if (!servers.includes(tool.mcp_server_name)) {
      return invalidRequest(
        `tools.${index}.mcp_toolset.mcp_server_name: '${String(tool.mcp_server_name)}' is not a server in mcp_servers`,
      );
    }
  }
  for (const name of servers) {
    const refs = toolsets.filter(({ tool }) => tool.mcp_server_name === name).length;
    if (refs === 0) {
      // The API's sentence, as anthropics/anthropic-sdk-csharp#255 reported it (quoted in that
      // repository's pull request anthropics/anthropic-sdk-csharp#267).
      return invalidRequest(
        `MCP server '${String(name)}' is defined but not referenced by any mcp_toolset in tools.`,
      );
    }
    if (refs !== 1) {
      return invalidRequest(
        `mcp_servers: server '${String(name)}' must be referenced by exactly one mcp_toolset in tools (found ${refs})`,
      );
    }
  }
  return null;
}
