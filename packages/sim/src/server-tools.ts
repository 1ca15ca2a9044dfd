import { createHash } from "node:crypto";
import type { MessagesRequest } from "./request-schema.js";
import type { ReplyBlock, ServerToolResultType } from "./types.js";

/**
 * Web search and web fetch, the server tools the API runs inside one response (R-D4): web search
 * tool page (https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool) and web
 * fetch tool page (…/web-fetch-tool). The simulator reaches no network: a scenario (or the
 * `web` option) supplies the search results and pages, and every result block is made from them.
 */
export interface WebFixtures {
  /** Searches: the first entry whose `query` matches (a substring, or `/regex/flags`) answers. */
  search?: readonly { query: string; results: readonly WebPage[] }[] | undefined;
  /** Pages web fetch can reach, by URL. */
  pages?: Readonly<Record<string, Omit<WebPage, "url">>> | undefined;
  /**
   * Images a `{"type": "url"}` image source can name: URL → the image's bytes, base64. The API
   * downloads such an image and applies the same limits as to one sent inline; the simulator
   * measures these bytes instead (validate-image-dimensions.ts). A URL not listed is not measured.
   */
  images?: Readonly<Record<string, string>> | undefined;
}

export interface WebPage {
  url: string;
  title: string;
  /** The page's text (what a fetch returns, what a search result's cited text comes from). */
  text?: string | undefined;
  page_age?: string | null | undefined;
}

export interface ServerToolCounts {
  web_search_requests: number;
  web_fetch_requests: number;
}

/** Web search pricing (pricing page): $10 per 1,000 searches; a failed search is not billed. */
export const WEB_SEARCH_PRICE_USD = 0.01;

interface WebTool {
  name: "web_search" | "web_fetch" | CodeExecutionCall;
  maxUses: number;
  allowedDomains: readonly string[] | null;
  blockedDomains: readonly string[] | null;
}

/**
 * Code execution (code execution tool page,
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/code-execution-tool): the
 * simulator runs no code, so a call of a declared code execution tool gets the page's error
 * result `unavailable` ("the tool is temporarily unavailable") — a documented answer a client
 * must handle, never an invented output. `code_execution_20250522` calls `code_execution`
 * (`code_execution_tool_result`); later versions call `bash_code_execution` and
 * `text_editor_code_execution`, each with its own result type.
 */
type CodeExecutionCall = "code_execution" | "bash_code_execution" | "text_editor_code_execution";
const CODE_EXECUTION_RESULT: Readonly<Record<CodeExecutionCall, ServerToolResultType>> = {
  code_execution: "code_execution_tool_result",
  bash_code_execution: "bash_code_execution_tool_result",
  text_editor_code_execution: "text_editor_code_execution_tool_result",
};

/** The web and code execution tools a request declares (by their versioned types), by the names their calls use. */
export function declaredWebTools(body: MessagesRequest): Map<string, WebTool> {
  const tools = new Map<string, WebTool>();
  for (const tool of body.tools ?? []) {
    const type = (tool as { type?: unknown }).type;
    if (typeof type !== "string") continue;
    if (type.startsWith("code_execution_")) {
      const calls: CodeExecutionCall[] =
        type === "code_execution_20250522"
          ? ["code_execution"]
          : ["bash_code_execution", "text_editor_code_execution"];
      for (const name of calls) {
        tools.set(name, {
          name,
          maxUses: Number.POSITIVE_INFINITY,
          allowedDomains: null,
          blockedDomains: null,
        });
      }
      continue;
    }
    const name = type.startsWith("web_search_")
      ? "web_search"
      : type.startsWith("web_fetch_")
        ? "web_fetch"
        : null;
    if (!name) continue;
    const config = tool as {
      max_uses?: number | null;
      allowed_domains?: string[] | null;
      blocked_domains?: string[] | null;
    };
    tools.set(name, {
      name,
      maxUses: config.max_uses ?? Number.POSITIVE_INFINITY,
      allowedDomains: config.allowed_domains ?? null,
      blockedDomains: config.blocked_domains ?? null,
    });
  }
  return tools;
}

/**
 * Runs the declared web tools a reply calls, in order, each result right after its call: web
 * search answers from the fixtures (an unmatched query finds nothing), filtered by
 * allowed/blocked domains; web fetch returns a fixture page as a plain-text document, only for a
 * URL already in the conversation (user text, tool results, earlier search results) and allowed
 * by the domain lists — else the page's error codes (`url_not_in_prior_context`,
 * `url_not_allowed`, `url_not_accessible`). Past `max_uses` a call gets `max_uses_exceeded`.
 * `used` counts this response's calls so far and is updated.
 */
export function runWebTools(
  blocks: readonly ReplyBlock[],
  body: MessagesRequest,
  fixtures: WebFixtures,
  used: ServerToolCounts & { calls: Record<string, number> },
  idOf: (index: number) => string,
  now: number,
): ReplyBlock[] {
  const tools = declaredWebTools(body);
  const out: ReplyBlock[] = [];
  const known = new Set(urlsIn(JSON.stringify(body.messages)));
  for (const [i, block] of blocks.entries()) {
    if (block.type !== "server_tool_use" || !tools.has(block.name) || hasResult(blocks, block.id)) {
      out.push(block);
      if (block.type === "web_search_tool_result")
        for (const url of urlsIn(JSON.stringify(block.content))) known.add(url);
      continue;
    }
    const tool = tools.get(block.name) as WebTool;
    const call = { ...block, id: block.id ?? idOf(i) };
    out.push(call);
    used.calls[tool.name] = (used.calls[tool.name] ?? 0) + 1;
    const overLimit = (used.calls[tool.name] ?? 0) > tool.maxUses;
    if (tool.name in CODE_EXECUTION_RESULT) {
      const type = CODE_EXECUTION_RESULT[tool.name as CodeExecutionCall];
      out.push({
        type,
        tool_use_id: call.id,
        content: { type: `${type}_error`, error_code: "unavailable" },
      });
    } else if (tool.name === "web_search") {
      const content = overLimit ? searchError("max_uses_exceeded") : search(call.input, tool, fixtures);
      if (Array.isArray(content)) {
        used.web_search_requests++;
        for (const result of content) known.add(result.url);
      }
      out.push({ type: "web_search_tool_result", tool_use_id: call.id, content });
    } else {
      const content = overLimit
        ? fetchError("max_uses_exceeded")
        : fetchPage(call.input, tool, fixtures, known, now);
      if (content.type === "web_fetch_result") used.web_fetch_requests++;
      out.push({ type: "web_fetch_tool_result", tool_use_id: call.id, content });
    }
  }
  return out;
}

interface SearchResult {
  type: "web_search_result";
  url: string;
  title: string;
  encrypted_content: string;
  page_age: string | null;
}

function search(
  input: Record<string, unknown>,
  tool: WebTool,
  fixtures: WebFixtures,
): SearchResult[] | object {
  const query = input.query;
  if (typeof query !== "string" || query.trim() === "") return searchError("invalid_tool_input");
  const entry = fixtures.search?.find((each) => matches(each.query, query));
  return (entry?.results ?? [])
    .filter((page) => allowed(page.url, tool))
    .map((page) => ({
      type: "web_search_result" as const,
      url: page.url,
      title: page.title,
      encrypted_content: encryptedContent(page),
      page_age: page.page_age ?? null,
    }));
}

function fetchPage(
  input: Record<string, unknown>,
  tool: WebTool,
  fixtures: WebFixtures,
  known: ReadonlySet<string>,
  now: number,
): { type: string } & Record<string, unknown> {
  const url = input.url;
  if (typeof url !== "string" || !/^https?:\/\//.test(url)) return fetchError("invalid_tool_input");
  if (url.length > 250) return fetchError("url_too_long");
  if (!allowed(url, tool)) return fetchError("url_not_allowed");
  if (!known.has(url)) return fetchError("url_not_in_prior_context");
  const page = fixtures.pages?.[url];
  if (!page) return fetchError("url_not_accessible");
  return {
    type: "web_fetch_result",
    url,
    content: {
      type: "document",
      source: { type: "text", media_type: "text/plain", data: page.text ?? "" },
      title: page.title,
    },
    retrieved_at: new Date(now).toISOString(),
  };
}

function searchError(error_code: string): object {
  return { type: "web_search_tool_result_error", error_code };
}

function fetchError(error_code: string): { type: string; error_code: string } {
  return { type: "web_fetch_tool_result_error", error_code };
}

function hasResult(blocks: readonly ReplyBlock[], id: string | undefined): boolean {
  return id !== undefined && blocks.some((b) => "tool_use_id" in b && b.tool_use_id === id);
}

/** A domain list entry matches the host and its subdomains (web search page, domain filtering). */
function allowed(url: string, tool: WebTool): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  const within = (domain: string) => host === domain || host.endsWith(`.${domain}`);
  if (tool.allowedDomains && !tool.allowedDomains.some(within)) return false;
  return !tool.blockedDomains?.some(within);
}

function matches(pattern: string, query: string): boolean {
  const regex = /^\/(.*)\/([a-z]*)$/.exec(pattern);
  if (regex) return new RegExp(regex[1] ?? "", regex[2]).test(query);
  return query.toLowerCase().includes(pattern.toLowerCase());
}

/**
 * The API's `encrypted_content` is opaque (clients send it back for citations); the simulator's
 * is the page's text, base64, so a citation can quote it.
 */
function encryptedContent(page: WebPage): string {
  return Buffer.from(JSON.stringify({ url: page.url, text: page.text ?? page.title })).toString("base64");
}

/** The page text behind a search result's `encrypted_content` (for citations). */
export function searchResultText(result: { encrypted_content?: unknown; title?: unknown }): string {
  try {
    const decoded = JSON.parse(Buffer.from(String(result.encrypted_content), "base64").toString("utf8")) as {
      text?: unknown;
    };
    return typeof decoded.text === "string" ? decoded.text : String(result.title ?? "");
  } catch {
    return String(result.title ?? "");
  }
}

/** A stable server tool id for a continuation's call. */
export function serverToolId(seed: string, index: number): string {
  return `srvtoolu_01${createHash("sha256").update(`${seed}:${index}`).digest("hex").slice(0, 22)}`;
}

function urlsIn(text: string): string[] {
  return [...text.matchAll(/https?:\/\/[^\s"'<>\\)]+/g)].map((m) => m[0]);
}
