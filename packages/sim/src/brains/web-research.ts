import { blocksOf } from "../conversation-turns.js";
import { declaredWebTools, searchResultText } from "../server-tools.js";
import type { BrainReply, BrainRequest, Citation, ReplyBlock } from "../types.js";
import { truncate } from "./compaction-summary.js";
import { describeContent } from "./describe-content.js";

/** How much of a result a citation quotes (the API's `cited_text` is a short passage). */
const CITED_CHARS = 150;

/**
 * The built-in policy's use of web search and web fetch (R-D4), when the request declares them:
 * "search (the web) for X" / "look up X" → a web_search call; a task naming a URL → a web_fetch
 * call; and once the simulator has run the call (brain-turn.ts), a summary of the results, each
 * line citing its result (`web_search_result_location`, web search page). Null otherwise.
 */
export function webResearch(
  request: BrainRequest,
  task: string | null,
  say: (text: string) => string,
): BrainReply | null {
  const tools = declaredWebTools(request.body);
  if (tools.size === 0) return null;
  const last = request.body.messages.at(-1);
  if (last?.role === "assistant") {
    const result = blocksOf(last).at(-1);
    if (result?.type === "web_search_tool_result") return summariseSearch(result.content, say);
    if (result?.type === "web_fetch_tool_result") return summariseFetch(result.content, say);
    return null;
  }
  if (task === null) return null;
  const query = /\b(?:search(?:\s+the\s+web)?\s+for|look\s+up|google)\s+(.+?)[.?!]*$/im.exec(task)?.[1];
  if (query && tools.has("web_search"))
    return call(say(`Searching the web for "${truncate(query, 80)}".`), "web_search", { query });
  const url = /https?:\/\/[^\s"'<>)]+/.exec(task)?.[0];
  if (url && tools.has("web_fetch")) return call(say(`Fetching ${url}.`), "web_fetch", { url });
  return null;
}

function call(text: string, name: string, input: Record<string, unknown>): BrainReply {
  return {
    content: [
      { type: "text", text },
      { type: "server_tool_use", name, input },
    ],
    adaptiveThinking: false,
  };
}

function summariseSearch(content: unknown, say: (text: string) => string): BrainReply {
  if (!Array.isArray(content)) {
    const code = (content as { error_code?: string } | null)?.error_code ?? "unknown";
    return {
      content: [{ type: "text", text: say(`The web search failed (${code}).`) }],
      adaptiveThinking: false,
    };
  }
  if (content.length === 0) {
    return {
      content: [{ type: "text", text: say("The web search found nothing.") }],
      adaptiveThinking: false,
    };
  }
  const blocks: ReplyBlock[] = [
    { type: "text", text: say(`The web search found ${content.length} results:`) },
  ];
  for (const [i, result] of (content as Record<string, unknown>[]).entries()) {
    const text = searchResultText(result);
    const citation: Citation = {
      type: "web_search_result_location",
      url: String(result.url),
      title: String(result.title),
      encrypted_index: Buffer.from(String(i)).toString("base64"),
      cited_text: text.slice(0, CITED_CHARS),
    };
    blocks.push({
      type: "text",
      text: `\n- ${String(result.title)}: ${truncate(text, 120)}`,
      citations: [citation],
    });
  }
  return { content: blocks, adaptiveThinking: false };
}

function summariseFetch(content: unknown, say: (text: string) => string): BrainReply {
  const fetched = content as {
    type?: string;
    url?: string;
    error_code?: string;
    content?: { source?: { data?: string } };
  };
  const text =
    fetched.type === "web_fetch_result"
      ? describeContent(fetched.url ?? "the page", fetched.content?.source?.data ?? "")
      : `The web fetch failed (${fetched.error_code ?? "unknown"}).`;
  return { content: [{ type: "text", text: say(text) }], adaptiveThinking: false };
}
