import type Anthropic from "@anthropic-ai/sdk";
import type { Tool } from "@forkloop/loop-core";
import { loadAnthropicSdk, QUERY_SOURCE_HEADER } from "@forkloop/loop-core";
import { createWebSearchTool, type WebSearcher } from "@forkloop/tools";
import type { SubAgentBashOptions } from "./agent-profile.js";
import { modelClientOptions } from "./model-client-options.js";
import type { ModelEndpoint } from "./sub-agent-types.js";

/** The server tool's version Claude Code sends (R-T6); every model with web search takes it. */
const WEB_SEARCH_TOOL_TYPE = "web_search_20250305";
/** Searches one WebSearch call may run (Claude Code's max_uses). */
const MAX_SEARCHES = 8;
/** A paused server-tool turn is sent back this many times at most (pause_turn). */
const MAX_CONTINUATIONS = 3;

/**
 * WebSearch's searcher (R-T6), as Claude Code's: one request on the calling agent's model with
 * the API's `web_search` server tool passed through (domain lists as given), a short system
 * prompt and the query; a `pause_turn` is continued by sending the reply back. The API runs the
 * searches; the content blocks come back for the tool to word. Sent with the query source
 * `web_search`, so a simulator or a log tells it from the agent's own requests.
 */
export function apiWebSearcher(
  client: () => Anthropic,
  onUsage?: (model: string, usage: Anthropic.Messages.Usage, agentId: string) => void,
): WebSearcher {
  return async (request) => {
    const tool = {
      type: WEB_SEARCH_TOOL_TYPE,
      name: "web_search",
      max_uses: MAX_SEARCHES,
      ...(request.allowedDomains === undefined ? {} : { allowed_domains: [...request.allowedDomains] }),
      ...(request.blockedDomains === undefined ? {} : { blocked_domains: [...request.blockedDomains] }),
    } as Anthropic.Messages.WebSearchTool20250305;
    const messages: Anthropic.Messages.MessageParam[] = [
      { role: "user", content: `Perform a web search for the query: ${request.query}` },
    ];
    const blocks: unknown[] = [];
    for (let round = 0; round <= MAX_CONTINUATIONS; round++) {
      const response = await client().messages.create(
        {
          model: request.model,
          max_tokens: 4_096,
          system: "You are an assistant for performing a web search tool use",
          messages,
          tools: [tool],
        },
        { signal: request.signal, headers: { [QUERY_SOURCE_HEADER]: "web_search" } },
      );
      // R-T6: the search's tokens and searches are the session's cost too.
      onUsage?.(request.model, response.usage, request.agentId);
      blocks.push(...response.content);
      if (response.stop_reason !== "pause_turn") break;
      messages.push({ role: "assistant", content: response.content });
    }
    return blocks;
  };
}

/**
 * `apiWebSearcher` for callers with an endpoint and no client of their own (a batch's items): the
 * client is made at the first search, so a run that never searches never loads the SDK here.
 */
export function endpointWebSearcher(
  endpoint: ModelEndpoint,
  onUsage: (model: string, usage: Anthropic.Messages.Usage, agentId: string) => void,
): WebSearcher {
  let client: Anthropic | undefined;
  const search = apiWebSearcher(() => client as Anthropic, onUsage);
  return async (request) => {
    client ??= new (await loadAnthropicSdk())({
      ...modelClientOptions(endpoint),
      maxRetries: endpoint.maxRetries ?? 2,
    });
    return search(request);
  };
}

/**
 * The session's tools with its WebSearch given the searcher (the built-in list offers it without
 * one); the sandbox's network switch holds as for the built-in one. A list without WebSearch (a
 * deny rule removed it) stays without it.
 */
export function withWebSearcher(
  tools: readonly Tool[],
  search: WebSearcher,
  sandbox: SubAgentBashOptions["sandbox"],
): Tool[] {
  const networkOff = sandbox?.enabled === true && sandbox.network !== true;
  return tools.map((tool) =>
    tool.name === "WebSearch" ? (createWebSearchTool({ search, networkOff }) as unknown as Tool) : tool,
  );
}
