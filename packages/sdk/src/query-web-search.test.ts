import type { BrainReply, BrainRequest, RequestRecord } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { query } from "./query.js";
import { collectMessages, startHarness } from "./test-support/sdk-harness.js";

const PAGE = {
  url: "https://docs.example.org/release",
  title: "Release 9 notes",
  text: "Release 9 ships on Friday.",
};

function brain(request: BrainRequest): BrainReply | undefined {
  if (request.querySource === "web_search") {
    // The search request: the server tool runs in the response (the simulator answers it).
    if (request.turnIndex > 0 || JSON.stringify(request.body.messages).includes("web_search_tool_result")) {
      return { content: [{ type: "text", text: "Release 9 ships on Friday." }], adaptiveThinking: false };
    }
    return {
      content: [
        { type: "text", text: "Searching." },
        { type: "server_tool_use", name: "web_search", input: { query: "release 9" } },
        { type: "text", text: "Release 9 ships on Friday, says the release page." },
      ],
      adaptiveThinking: false,
    } as BrainReply;
  }
  if (request.querySource?.startsWith("agent:")) {
    // A sub-agent in a worker thread searches too: its WebSearch runs in the parent (the proxy).
    if (request.lastToolResults.length > 0) {
      return { content: [{ type: "text", text: `sub-agent saw: ${request.lastToolResults[0]?.content}` }] };
    }
    return { content: [{ type: "tool_use", name: "WebSearch", input: { query: "release 9" } }] };
  }
  if (request.querySource !== "sdk") return undefined;
  if (request.lastToolResults.length > 0) return { content: [{ type: "text", text: "searched" }] };
  if ((request.lastUserText ?? "").includes("delegate")) {
    return {
      content: [
        {
          type: "tool_use",
          name: "Agent",
          input: { description: "search", prompt: "Search for release 9.", subagent_type: "general-purpose" },
        },
      ],
    };
  }
  const input = (request.lastUserText ?? "").includes("both lists")
    ? { query: "release 9", allowed_domains: ["example.org"], blocked_domains: ["example.com"] }
    : { query: "release 9", allowed_domains: ["example.org"] };
  return { content: [{ type: "tool_use", name: "WebSearch", input }] };
}

describe("R-T6: WebSearch through the API's server-side web search tool", () => {
  let harness: Awaited<ReturnType<typeof startHarness>>;
  beforeAll(async () => {
    harness = await startHarness(brain, { web: { search: [{ query: "release", results: [PAGE] }] } });
  });
  afterAll(async () => {
    await harness.close();
  });
  const requests = (source: string): RequestRecord[] =>
    harness.sim
      .requests()
      .filter((record) => record.path === "/v1/messages" && record.querySource === source);

  it("R-T6: a WebSearch call sends web_search_20250305 with its domain list; the simulator's server_tool_use and web_search_tool_result come back as Claude Code words them", async () => {
    harness.sim.clearRequests();
    const messages = await collectMessages(
      query({
        prompt: "when does release 9 ship?",
        options: harness.options({ allowedTools: ["WebSearch"] }),
      }),
    );
    const init = messages.find((message) => message.type === "system" && message.subtype === "init");
    expect((init as { tools: string[] }).tools).toContain("WebSearch");
    const [search] = requests("web_search");
    const body = JSON.parse(search?.rawBody ?? "{}") as { tools: unknown[]; messages: unknown[] };
    expect(body.tools).toEqual([
      { type: "web_search_20250305", name: "web_search", max_uses: 8, allowed_domains: ["example.org"] },
    ]);
    expect(JSON.stringify(body.messages)).toContain("Perform a web search for the query: release 9");
    // The simulator ran the server tool and counted it.
    expect(search?.usage?.server_tool_use?.web_search_requests).toBe(1);
    // The main agent's request is sent the tool's result: the search's text and its links.
    const main = requests("sdk");
    const result = JSON.parse(main.at(-1)?.rawBody ?? "{}").messages.at(-1).content[0];
    expect(result.is_error).toBeUndefined();
    expect(result.content).toContain('Web search results for query: "release 9"');
    expect(result.content).toContain(`Links: ${JSON.stringify([{ title: PAGE.title, url: PAGE.url }])}`);
    expect(result.content).toContain("Release 9 ships on Friday, says the release page.");
    expect(result.content).toContain("REMINDER: You MUST include the sources above");
    // The main agent's own requests offer WebSearch as a client tool, not the server tool.
    expect(main[0]?.rawBody).not.toContain("web_search_20250305");
    // The search's tokens and its $0.01 count in the result's cost, as the simulator bills them
    // (control: the main loop's requests alone cost less).
    const ended = messages.filter((message) => message.type === "result").at(-1) as {
      total_cost_usd: number;
    };
    const billed = [...main, search].reduce((sum, record) => sum + (record?.costUsd ?? 0), 0);
    const mainOnly = main.reduce((sum, record) => sum + record.costUsd, 0);
    expect(ended.total_cost_usd).toBeCloseTo(billed, 9);
    expect(ended.total_cost_usd - mainOnly).toBeGreaterThanOrEqual(0.01);
  });

  it("R-T6: each search counts in the result's usage.server_tool_use.web_search_requests and its model's webSearchRequests, as Claude Code reports them", async () => {
    harness.sim.clearRequests();
    const options = harness.options({ allowedTools: ["WebSearch"] });
    const messages = await collectMessages(query({ prompt: "when does release 9 ship?", options }));
    const searched = requests("web_search").reduce(
      (sum, record) => sum + (record.usage?.server_tool_use?.web_search_requests ?? 0),
      0,
    );
    expect(searched).toBe(1);
    const result = messages.filter((message) => message.type === "result").at(-1) as {
      usage: { server_tool_use: { web_search_requests: number } };
      modelUsage: Record<string, { webSearchRequests: number }>;
    };
    expect(result.usage.server_tool_use.web_search_requests).toBe(searched);
    const perModel = Object.values(result.modelUsage).reduce(
      (sum, usage) => sum + usage.webSearchRequests,
      0,
    );
    expect(perModel).toBe(searched);
  });

  it("R-T6: a sub-agent in a worker thread calls WebSearch; the search runs through the session's client and its result reaches the sub-agent", async () => {
    harness.sim.clearRequests();
    await collectMessages(
      query({
        prompt: "delegate the search",
        options: harness.options({ allowedTools: ["Agent", "WebSearch"] }),
      }),
    );
    expect(requests("web_search")).toHaveLength(1);
    const fork = requests("agent:general-purpose");
    expect(fork.at(-1)?.rawBody).toContain('Web search results for query: \\"release 9\\"');
    // The parent's Agent result carries the sub-agent's report of it.
    expect(requests("sdk").at(-1)?.rawBody).toContain("sub-agent saw: Web search results");
  });

  it("R-T6: both domain lists at once is a tool error naming the fix, and no search is sent", async () => {
    harness.sim.clearRequests();
    await collectMessages(
      query({ prompt: "search with both lists", options: harness.options({ allowedTools: ["WebSearch"] }) }),
    );
    expect(requests("web_search")).toEqual([]);
    const result = JSON.parse(requests("sdk").at(-1)?.rawBody ?? "{}").messages.at(-1).content[0];
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/allowed_domains or blocked_domains, not both/);
  });

  it("R-T6: without an allow rule a WebSearch call is asked about (a network tool), and refused headless", async () => {
    harness.sim.clearRequests();
    await collectMessages(query({ prompt: "when does release 9 ship?", options: harness.options() }));
    expect(requests("web_search")).toEqual([]);
    const result = JSON.parse(requests("sdk").at(-1)?.rawBody ?? "{}").messages.at(-1).content[0];
    expect(result.is_error).toBe(true);
  });
});
