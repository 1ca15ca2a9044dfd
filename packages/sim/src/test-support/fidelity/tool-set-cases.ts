import { bad, base, type Case, ok, okWith, PAGE, type ResponseBody } from "./case.js";

const tool = (name: string, deferred?: boolean) => ({
  name,
  description: `the ${name} tool`,
  input_schema: { type: "object", properties: {} },
  ...(deferred === undefined ? {} : { defer_loading: deferred }),
});
const SEARCH = { type: "tool_search_tool_regex_20251119", name: "tool_search_tool_regex" };
const MCP_BETA = ["mcp-client-2025-11-20"];
const server = (name: string) => ({ type: "url", url: `https://${name}.example/mcp`, name });
const toolset = (name: string) => ({ type: "mcp_toolset", mcp_server_name: name });
/** A system prompt past Sonnet 4.6's minimum cacheable length (prompt caching page). */
const LONG_SYSTEM = "Keep every answer short and plain. ".repeat(400);

/** Tools taken together — deferral, MCP toolsets — and the 1-hour cache TTL (R-D2, R-D3). */
export const TOOL_SET_CASES: Case[] = [
  {
    page: PAGE.toolSearch,
    title: "every tool deferred → 400 with the page's message",
    body: base("claude-sonnet-4-6", { tools: [tool("a", true), tool("b", true)] }),
    expect: bad("All tools have defer_loading set. At least one tool must be non-deferred."),
  },
  {
    page: PAGE.toolSearch,
    title: "the tool search tool deferred → 400",
    body: base("claude-sonnet-4-6", { tools: [{ ...SEARCH, defer_loading: true }, tool("a")] }),
    expect: bad(/tool search tool cannot have defer_loading/),
  },
  {
    page: PAGE.toolSearch,
    title: "deferred tools beside a non-deferred tool search tool → accepted",
    body: base("claude-sonnet-4-6", { tools: [SEARCH, tool("a", true), tool("b", true)] }),
    expect: ok,
  },
  {
    page: PAGE.mcpConnector,
    title: "an MCP server without an mcp_toolset → 400",
    betas: MCP_BETA,
    body: base("claude-sonnet-4-6", { mcp_servers: [server("docs")] }),
    expect: bad("MCP server 'docs' is defined but not referenced by any mcp_toolset in tools."),
  },
  {
    page: PAGE.mcpConnector,
    title: "an MCP server with two mcp_toolsets → 400",
    betas: MCP_BETA,
    body: base("claude-sonnet-4-6", {
      mcp_servers: [server("docs")],
      tools: [toolset("docs"), toolset("docs")],
    }),
    expect: bad(/found 2/),
  },
  {
    page: PAGE.mcpConnector,
    title: "an mcp_toolset naming a server not in mcp_servers → 400",
    betas: MCP_BETA,
    body: base("claude-sonnet-4-6", {
      mcp_servers: [server("docs")],
      tools: [toolset("docs"), toolset("wiki")],
    }),
    expect: bad(/'wiki' is not a server in mcp_servers/),
  },
  {
    page: PAGE.promptCaching,
    title: "a 1-hour cache_control writes (or reads) the prefix as 1-hour tokens, none as 5-minute",
    body: base("claude-sonnet-4-6", {
      system: [{ type: "text", text: LONG_SYSTEM, cache_control: { type: "ephemeral", ttl: "1h" } }],
    }),
    expect: okWith((body: ResponseBody) => {
      const usage = body.usage as {
        cache_read_input_tokens: number;
        cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
      };
      const cached = usage.cache_creation.ephemeral_1h_input_tokens + usage.cache_read_input_tokens;
      if (usage.cache_creation.ephemeral_5m_input_tokens !== 0 || cached === 0)
        throw new Error(JSON.stringify(usage));
    }),
  },
];
