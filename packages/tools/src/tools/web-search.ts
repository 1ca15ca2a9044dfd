import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import { defineTool, toolError } from "../tool-kit.js";

/** What one search asks of the API (R-T6): the query and the domain lists, as the server tool takes them. */
export interface WebSearchRequest {
  readonly query: string;
  readonly allowedDomains?: readonly string[] | undefined;
  readonly blockedDomains?: readonly string[] | undefined;
  /** The calling agent's model (the search request runs on it). */
  readonly model: string;
  /** The calling agent's id: whose cost the search's request counts in (a batch item's, say). */
  readonly agentId: string;
  readonly signal: AbortSignal;
}

/**
 * Runs one search through the Messages API's server tool (`web_search_20250305`) and returns the
 * response's content blocks (text, server_tool_use, web_search_tool_result) — the orchestrator's
 * `apiWebSearcher`, which has the session's model client; the tools package has none.
 */
export type WebSearcher = (request: WebSearchRequest) => Promise<readonly unknown[]>;

export interface WebSearchToolOptions {
  /** Undefined where no model endpoint is known: the call is a tool error saying so. */
  readonly search?: WebSearcher;
  /** R-S6: the sandbox on with its network off refuses it, as WebFetch. */
  readonly networkOff?: boolean;
}

/** Characters of a result the model gets (results are hostile text: capped like any tool output). */
const RESULT_MAX_CHARS = 100_000;

const domainList = lazySchema(() => z.array(z.string().min(1).max(253)).max(100));

/**
 * Claude Code's WebSearch (R-T6): the name and input schema (`query`, `allowed_domains`,
 * `blocked_domains`) the model knows; a call sends one request with the API's server-side web
 * search tool and returns what it found as Claude Code words it — the search's text, each
 * search's links as JSON, errors by code — with its reminder to cite the sources. Read-only for
 * plan mode, but the permission checker asks for it unless a rule allows it (a network tool).
 */
const webSearchInput = lazySchema(() =>
  z
    .object({
      query: z.string().min(2).max(2_000).describe("The search query to use"),
      allowed_domains: domainList.optional().describe("Only include search results from these domains"),
      blocked_domains: domainList.optional().describe("Never include search results from these domains"),
    })
    .strict(),
);

export function createWebSearchTool(options: WebSearchToolOptions = {}) {
  return defineTool({
    name: "WebSearch",
    description:
      "- Searches the web and uses the results to inform responses\n" +
      "- Provides up-to-date information for current events and recent data\n" +
      "- Returns search result information formatted as search result blocks, including links as markdown hyperlinks\n" +
      "- Domain filtering is supported to include or block specific websites\n\n" +
      "After answering, you MUST include a Sources section listing the relevant URLs as markdown hyperlinks.",
    inputSchema: webSearchInput,
    isConcurrencySafe: () => true,
    isReadOnly: () => true,
    maxResultSizeChars: RESULT_MAX_CHARS + 2_000,
    async call(input, context) {
      if (options.networkOff === true) {
        return toolError(
          "The sandbox is on with its network off, so WebSearch does not search the web. Turn the sandbox's network on to search.",
        );
      }
      if (input.allowed_domains !== undefined && input.blocked_domains !== undefined) {
        return toolError(
          "Give allowed_domains or blocked_domains, not both: the web search tool takes one list.",
        );
      }
      if (options.search === undefined) {
        return toolError("WebSearch cannot run here: this agent has no model endpoint to search through.");
      }
      let blocks: readonly unknown[];
      try {
        blocks = await options.search({
          query: input.query,
          allowedDomains: input.allowed_domains,
          blockedDomains: input.blocked_domains,
          model: context.options.model,
          agentId: context.agentId,
          signal: context.abortController.signal,
        });
      } catch (error) {
        if (context.abortController.signal.aborted) throw error;
        return toolError(`Web search failed: ${(error as Error).message}`);
      }
      return { content: formatSearch(input.query, blocks) };
    },
  });
}

/** Claude Code's wording of a search's outcome: text as it came, links per search, errors by code. */
function formatSearch(query: string, blocks: readonly unknown[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    if (typeof block !== "object" || block === null) continue;
    const typed = block as { type?: unknown; text?: unknown; content?: unknown };
    if (typed.type === "text" && typeof typed.text === "string" && typed.text.trim() !== "") {
      parts.push(typed.text.trim());
    } else if (typed.type === "web_search_tool_result") {
      if (Array.isArray(typed.content)) {
        const links = typed.content.flatMap((result: unknown) => {
          const { title, url } = (result ?? {}) as { title?: unknown; url?: unknown };
          return typeof url === "string" ? [{ title: typeof title === "string" ? title : url, url }] : [];
        });
        parts.push(`Links: ${JSON.stringify(links)}`);
      } else {
        const code = (typed.content as { error_code?: unknown } | undefined)?.error_code;
        parts.push(`Web search error: ${typeof code === "string" ? code : "unknown"}`);
      }
    }
  }
  if (parts.length === 0) parts.push("No results found.");
  let body = parts.join("\n\n");
  if (body.length > RESULT_MAX_CHARS)
    body = `${body.slice(0, RESULT_MAX_CHARS)}\n[results cut at ${RESULT_MAX_CHARS} characters]`;
  return (
    `Web search results for query: "${query}"\n\n${body}\n\n` +
    "REMINDER: You MUST include the sources above in your response to the user using markdown hyperlinks."
  );
}
