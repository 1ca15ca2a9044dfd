import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_SERVER_TOOL_ITERATIONS } from "./brain-turn.js";
import { parseScenario } from "./scenario.js";
import { startSimulator } from "./server.js";
import type { WebFixtures } from "./server-tools.js";
import type { Brain, Simulator } from "./types.js";

// Web search and web fetch answered from fixtures (R-D4): web search tool page
// https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool and web fetch tool
// page https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-fetch-tool.
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const MODEL = "claude-sonnet-4-6";
const WEB: WebFixtures = {
  search: [
    {
      query: "prompt caching",
      results: [
        {
          url: "https://docs.example.com/caching",
          title: "Prompt caching",
          text: "Cache reads cost a tenth.",
        },
        {
          url: "https://blog.other.org/cache",
          title: "A blog",
          text: "Caching saves money.",
          page_age: "2 days ago",
        },
      ],
    },
  ],
  pages: {
    "https://docs.example.com/caching": {
      title: "Prompt caching",
      text: "# Prompt caching\nReads cost 0.1x.",
    },
  },
};
const SEARCH = { type: "web_search_20250305" as const, name: "web_search" as const };
const FETCH = { type: "web_fetch_20250910" as const, name: "web_fetch" as const };

async function start(brain?: Brain, web: WebFixtures = WEB) {
  sim = await startSimulator({ web, ...(brain ? { brain } : {}) });
  return new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
}

describe("R-D4: web search from fixtures", () => {
  it("R-D4: the built-in policy searches, the simulator answers from the fixtures in the same response, the summary cites each result; usage counts the search and the cost bills it", async () => {
    const client = await start();
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 1000,
      tools: [SEARCH],
      messages: [{ role: "user", content: "Search the web for prompt caching prices" }],
    });
    const types = message.content.map((b) => b.type);
    expect(types.slice(0, 3)).toEqual(["text", "server_tool_use", "web_search_tool_result"]);
    const call = message.content[1] as Anthropic.ServerToolUseBlock;
    expect(call).toMatchObject({ name: "web_search", input: { query: "prompt caching prices" } });
    expect(call.id).toMatch(/^srvtoolu_/);
    const result = message.content[2] as Anthropic.WebSearchToolResultBlock;
    expect(result.tool_use_id).toBe(call.id);
    expect(result.content).toEqual([
      expect.objectContaining({
        type: "web_search_result",
        url: "https://docs.example.com/caching",
        page_age: null,
      }),
      expect.objectContaining({
        type: "web_search_result",
        url: "https://blog.other.org/cache",
        page_age: "2 days ago",
      }),
    ]);
    const cited = message.content.filter((b) => b.type === "text" && b.citations?.length);
    expect(cited).toHaveLength(2);
    expect((cited[0] as Anthropic.TextBlock).citations?.[0]).toMatchObject({
      type: "web_search_result_location",
      url: "https://docs.example.com/caching",
      cited_text: "Cache reads cost a tenth.",
    });
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
    const record = sim?.requests().at(-1);
    const tokensOnly = (record?.costUsd ?? 0) - 0.01;
    expect(tokensOnly).toBeGreaterThan(0);
    expect(tokensOnly).toBeLessThan(0.01);

    // The response sent back as the next turn's history is accepted.
    const next = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      tools: [SEARCH],
      messages: [
        { role: "user", content: "Search the web for prompt caching prices" },
        { role: "assistant", content: message.content },
        { role: "user", content: "thanks" },
      ],
    });
    expect(next.type).toBe("message");
  });

  it("R-D4: streamed, the result block arrives whole and citations as citations_delta: the SDK's final message equals the JSON one", async () => {
    const client = await start();
    const params = {
      model: MODEL,
      max_tokens: 1000,
      tools: [SEARCH],
      messages: [{ role: "user" as const, content: "Search the web for prompt caching" }],
    };
    const json = await client.messages.create(params);
    const streamed = await client.messages.stream(params).finalMessage();
    const strip = (m: Anthropic.Message) =>
      JSON.parse(JSON.stringify(m.content).replaceAll(/srvtoolu_\w+/g, "id"));
    expect(strip(streamed)).toEqual(strip(json));
    expect(streamed.usage.server_tool_use?.web_search_requests).toBe(1);
  });

  it("R-D4: allowed_domains filters the results; past max_uses a call gets max_uses_exceeded and is not billed", async () => {
    const twoSearches: Brain = (request) =>
      request.body.messages.at(-1)?.role === "assistant"
        ? { content: [{ type: "text", text: "done" }] }
        : {
            content: [
              { type: "server_tool_use", name: "web_search", input: { query: "prompt caching" } },
              { type: "server_tool_use", name: "web_search", input: { query: "prompt caching again" } },
            ],
          };
    const client = await start(twoSearches);
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 500,
      tools: [{ ...SEARCH, max_uses: 1, allowed_domains: ["example.com"] }],
      messages: [{ role: "user", content: "go" }],
    });
    const results = message.content.filter((b) => b.type === "web_search_tool_result");
    expect(results.map((r) => r.content)).toEqual([
      [expect.objectContaining({ url: "https://docs.example.com/caching" })],
      { type: "web_search_tool_result_error", error_code: "max_uses_exceeded" },
    ]);
    expect(message.usage.server_tool_use?.web_search_requests).toBe(1);
    expect(message.content.at(-1)).toMatchObject({ type: "text", text: "done" });
  });

  it(`R-D4: a brain that never stops searching ends in pause_turn after ${MAX_SERVER_TOOL_ITERATIONS} iterations`, async () => {
    const client = await start(() => ({
      content: [{ type: "server_tool_use", name: "web_search", input: { query: "prompt caching" } }],
    }));
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 4000,
      tools: [SEARCH],
      messages: [{ role: "user", content: "go" }],
    });
    expect(message.stop_reason).toBe("pause_turn");
    expect(message.usage.server_tool_use?.web_search_requests).toBe(MAX_SERVER_TOOL_ITERATIONS);
  });
});

describe("R-D4: web fetch from fixtures", () => {
  const fetchBrain: Brain = (request) => {
    const last = request.body.messages.at(-1);
    if (last?.role === "assistant") return { content: [{ type: "text", text: "read it" }] };
    const url = /https?:\/\/\S+/.exec(request.lastUserText ?? "")?.[0] ?? "https://nowhere.example.com/";
    return { content: [{ type: "server_tool_use", name: "web_fetch", input: { url } }] };
  };

  it("R-D4: a URL the user gave is fetched as a plain-text document; one never seen, one unknown and one blocked get the page's error codes", async () => {
    const client = await start(fetchBrain);
    const fetchOnce = async (text: string, tool: Record<string, unknown> = FETCH) => {
      const message = await client.messages.create({
        model: MODEL,
        max_tokens: 500,
        tools: [tool as never],
        messages: [{ role: "user", content: text }],
      });
      return message;
    };
    const ok = await fetchOnce("Read https://docs.example.com/caching please");
    const result = ok.content.find(
      (b) => b.type === "web_fetch_tool_result",
    ) as Anthropic.WebFetchToolResultBlock;
    expect(result.content).toMatchObject({
      type: "web_fetch_result",
      url: "https://docs.example.com/caching",
      content: {
        type: "document",
        source: { type: "text", media_type: "text/plain", data: "# Prompt caching\nReads cost 0.1x." },
      },
    });
    expect(ok.usage.server_tool_use).toEqual({ web_search_requests: 0, web_fetch_requests: 1 });
    const errorOf = (m: Anthropic.Message) =>
      (m.content.find((b) => b.type === "web_fetch_tool_result") as Anthropic.WebFetchToolResultBlock)
        .content;
    expect(errorOf(await fetchOnce("Read https://docs.example.com/missing"))).toEqual({
      type: "web_fetch_tool_result_error",
      error_code: "url_not_accessible",
    });
    expect(
      errorOf(
        await fetchOnce("Read https://docs.example.com/caching", {
          ...FETCH,
          blocked_domains: ["example.com"],
        }),
      ),
    ).toEqual({ type: "web_fetch_tool_result_error", error_code: "url_not_allowed" });
    expect(errorOf(await fetchOnce("read the page"))).toEqual({
      type: "web_fetch_tool_result_error",
      error_code: "url_not_in_prior_context",
    });
  });

  it("R-D4: a scenario file supplies the fixtures; the built-in policy fetches a URL the task names and summarises it", async () => {
    const scenario = parseScenario(
      JSON.stringify({
        rules: [{ match: { lastUserText: "never" }, reply: { content: [{ type: "text", text: "x" }] } }],
        web: WEB,
      }),
    );
    expect(scenario.web?.pages).toBeDefined();
    sim = await startSimulator({ web: scenario.web ?? {} });
    const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 1000,
      tools: [FETCH],
      messages: [{ role: "user", content: "Summarize https://docs.example.com/caching" }],
    });
    expect(message.content.map((b) => b.type)).toEqual([
      "text",
      "server_tool_use",
      "web_fetch_tool_result",
      "text",
    ]);
    expect(JSON.stringify(message.content.at(-1))).toContain("Prompt caching");
  });
});

// Code execution tool page: https://platform.claude.com/docs/en/agents-and-tools/tool-use/code-execution-tool
describe("R-D4: code execution is answered as unavailable, never with invented output", () => {
  it("R-D4: a bash_code_execution call of code_execution_20250825 gets its error result (unavailable) in the same response, streamed whole; the brain then answers", async () => {
    let calls = 0;
    const client = await start(() => {
      calls++;
      return calls === 1
        ? { content: [{ type: "server_tool_use", name: "bash_code_execution", input: { command: "ls" } }] }
        : { content: [{ type: "text", text: "The sandbox is unavailable." }] };
    });
    const body = {
      model: MODEL,
      max_tokens: 500,
      tools: [{ type: "code_execution_20250825", name: "code_execution" }],
      messages: [{ role: "user" as const, content: "list the files" }],
    };
    const message = (await client.messages.create(body as never)) as unknown as {
      content: Record<string, unknown>[];
      stop_reason: string;
    };
    expect(message.content.map((b) => b.type)).toEqual([
      "server_tool_use",
      "bash_code_execution_tool_result",
      "text",
    ]);
    const call = message.content[0]!;
    expect(message.content[1]).toMatchObject({
      tool_use_id: call.id,
      content: { type: "bash_code_execution_tool_result_error", error_code: "unavailable" },
    });
    expect(message.stop_reason).toBe("end_turn");
    calls = 0;
    const streamed = await client.messages.stream(body as never).finalMessage();
    expect(streamed.content[1]).toMatchObject({ type: "bash_code_execution_tool_result" });
  });

  it("R-D4: code_execution_20250522's call (code_execution) gets code_execution_tool_result unavailable", async () => {
    let calls = 0;
    const client = await start(() =>
      ++calls === 1
        ? { content: [{ type: "server_tool_use", name: "code_execution", input: { code: "print(1)" } }] }
        : { content: [{ type: "text", text: "ok" }] },
    );
    const message = (await client.messages.create({
      model: MODEL,
      max_tokens: 500,
      tools: [{ type: "code_execution_20250522", name: "code_execution" }],
      messages: [{ role: "user", content: "run it" }],
    } as never)) as unknown as { content: Record<string, unknown>[] };
    expect(message.content[1]).toMatchObject({
      type: "code_execution_tool_result",
      content: { type: "code_execution_tool_result_error", error_code: "unavailable" },
    });
  });
});
