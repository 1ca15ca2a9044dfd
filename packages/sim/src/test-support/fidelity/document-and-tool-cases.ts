import { bad, base, type Case, ok, okWith, PAGE, type ResponseBody, user } from "./case.js";

const textDocument = (data: string, citations?: boolean) => ({
  type: "document",
  source: { type: "text", media_type: "text/plain", data },
  title: "Notes",
  ...(citations === undefined ? {} : { citations: { enabled: citations } }),
});
const asking = (...blocks: Record<string, unknown>[]) => ({
  role: "user",
  content: [...blocks, { type: "text", text: "What does it say?" }],
});
const SCHEMA = { type: "json_schema", schema: { type: "object", properties: { a: { type: "string" } } } };
const content = (body: ResponseBody) => body.content as Record<string, unknown>[];

/** Files, citations and server tools (R-D4, R-D3). */
export const DOCUMENT_AND_TOOL_CASES: Case[] = [
  {
    page: PAGE.files,
    title: "a document whose file_id the key cannot see → 404 not_found_error",
    body: base("claude-sonnet-4-6", {
      messages: [asking({ type: "document", source: { type: "file", file_id: "file_unknown" } })],
    }),
    expect: { status: 404, type: "not_found_error" },
  },
  {
    page: PAGE.files,
    title: "a container_upload of an unknown file → 404 not_found_error",
    body: base("claude-sonnet-4-6", {
      messages: [asking({ type: "container_upload", file_id: "file_unknown" })],
    }),
    expect: { status: 404, type: "not_found_error" },
  },
  {
    page: PAGE.citations,
    title: "citations on a plain-text document: the answer cites it with a char_location",
    body: base("claude-sonnet-4-6", {
      messages: [asking(textDocument("The sky is blue. It is day.", true))],
    }),
    expect: okWith((body) => {
      const cited = content(body).find((b) => Array.isArray(b.citations));
      const citation = (cited?.citations as Record<string, unknown>[] | undefined)?.[0];
      if (
        citation?.type !== "char_location" ||
        citation.cited_text !== "The sky is blue." ||
        citation.document_index !== 0 ||
        citation.document_title !== "Notes"
      )
        throw new Error(`no char_location citation: ${JSON.stringify(content(body))}`);
    }),
  },
  {
    page: PAGE.citations,
    title: "citations on one document and not on another → 400",
    body: base("claude-sonnet-4-6", {
      messages: [asking(textDocument("One.", true), textDocument("Two.", false))],
    }),
    expect: bad(/all or none of the documents/),
  },
  {
    page: PAGE.citations,
    title: "citations off on every document → accepted, no citations",
    body: base("claude-sonnet-4-6", {
      messages: [asking(textDocument("One.", false), textDocument("Two."))],
    }),
    expect: okWith((body) => {
      if (content(body).some((b) => "citations" in b)) throw new Error("citations without citations enabled");
    }),
  },
  {
    page: PAGE.structuredOutputs,
    title: "citations with structured outputs (output_config.format) → 400",
    body: base("claude-sonnet-4-6", {
      messages: [asking(textDocument("One.", true))],
      output_config: { format: SCHEMA },
    }),
    expect: bad(/structured outputs/),
  },
  {
    page: PAGE.webSearch,
    title:
      "the web search tool declared, a search asked for: server_tool_use, its result block and usage.server_tool_use",
    body: base("claude-sonnet-4-6", {
      tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 2 }],
      messages: [user("Search the web for simulator fidelity")],
    }),
    expect: okWith((body) => {
      const types = content(body).map((b) => b.type);
      const usage = body.usage as { server_tool_use?: { web_search_requests: number } };
      if (!types.includes("server_tool_use") || !types.includes("web_search_tool_result"))
        throw new Error(`no search blocks: ${types.join(",")}`);
      if (usage.server_tool_use?.web_search_requests !== 1) throw new Error(JSON.stringify(usage));
    }),
  },
  {
    page: PAGE.webFetch,
    title: "the web fetch tool declared, nothing to fetch: usage.server_tool_use counts none",
    body: base("claude-sonnet-4-6", { tools: [{ type: "web_fetch_20250910", name: "web_fetch" }] }),
    expect: okWith((body) => {
      const usage = body.usage as { server_tool_use?: Record<string, number> };
      if (usage.server_tool_use?.web_fetch_requests !== 0) throw new Error(JSON.stringify(usage));
    }),
  },
  {
    page: PAGE.webSearch,
    title: "a web search result block sent back in the history → accepted",
    body: base("claude-sonnet-4-6", {
      tools: [{ type: "web_search_20250305", name: "web_search" }],
      messages: [
        user("search"),
        {
          role: "assistant",
          content: [
            { type: "server_tool_use", id: "srvtoolu_01abc", name: "web_search", input: { query: "q" } },
            {
              type: "web_search_tool_result",
              tool_use_id: "srvtoolu_01abc",
              content: [
                { type: "web_search_result", url: "https://a.example/", title: "A", encrypted_content: "e" },
              ],
            },
            { type: "text", text: "Found A." },
          ],
        },
        user("thanks"),
      ],
    }),
    expect: ok,
  },
];
