import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchStateDir, runCliInProcess } from "@forkloop/cli/testing";
import { type BrainReply, type BrainRequest, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-T6: a batch item searches the web. Its worker has no searcher, so its WebSearch call comes back
 * to the batch's process, which sends the search request (the API's server-side web search tool,
 * run by the simulator) through the batch's endpoint; that request counts in the item's usage and
 * cost.
 */
const PAGE = { url: "https://docs.example.org/release", title: "Release 9 notes", text: "Friday." };

function brain(request: BrainRequest): BrainReply {
  if (request.querySource === "web_search") {
    return {
      content: [
        { type: "server_tool_use", name: "web_search", input: { query: "release 9" } },
        { type: "text", text: "Release 9 ships on Friday, says the release page." },
      ],
      adaptiveThinking: false,
    } as BrainReply;
  }
  if (request.lastToolResults.length > 0) {
    return { content: [{ type: "text", text: `item saw: ${request.lastToolResults[0]?.content}` }] };
  }
  return { content: [{ type: "tool_use", name: "WebSearch", input: { query: "release 9" } }] };
}

let dir: string;
let sim: Awaited<ReturnType<typeof startSimulator>>;
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "forkloop-batch-web-search-")));
  await writeFile(join(dir, "items.jsonl"), '{"n":1}\n{"n":2}\n');
  sim = await startSimulator({ brain, web: { search: [{ query: "release", results: [PAGE] }] } });
});
afterAll(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

describe("R-T6: WebSearch in batch items", () => {
  it("R-T6: a batch item's WebSearch runs the server-side search through the batch's endpoint, and the search's request counts in the item's usage and cost", async () => {
    const result = await runCliInProcess(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "When does release 9 ship? ({{item.n}})",
        "--allowed-tools",
        "WebSearch",
        // The sandbox's default (network off) refuses a search, as it does in a session.
        "--sandbox",
        "off",
        "--id",
        "w",
      ],
      { cwd: dir, env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url } },
    );
    expect(result.code, result.stderr).toBe(0);
    const messages = sim.requests().filter((record) => record.path === "/v1/messages");
    const items = messages.filter((record) => record.querySource === "batch");
    const searches = messages.filter((record) => record.querySource === "web_search");
    // Each item offers WebSearch as a client tool; each searched once, with the server tool.
    expect(
      items.every((record) =>
        JSON.parse(record.rawBody).tools.some((t: { name: string }) => t.name === "WebSearch"),
      ),
    ).toBe(true);
    expect(searches).toHaveLength(2);
    for (const search of searches) {
      expect(JSON.parse(search.rawBody).tools).toEqual([
        { type: "web_search_20250305", name: "web_search", max_uses: 8 },
      ]);
      expect(search.usage?.server_tool_use?.web_search_requests).toBe(1);
    }
    // The item's next request carries the search's result as Claude Code words it.
    const answered = items.filter((record) => record.rawBody.includes("Web search results for query"));
    expect(answered).toHaveLength(2);
    expect(answered[0]?.rawBody).toContain(
      JSON.stringify(`Links: ${JSON.stringify([{ title: PAGE.title, url: PAGE.url }])}`).slice(1, -1),
    );

    const rows = (await readFile(join(batchStateDir(dir, "w"), "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { status: string; usage: { apiCalls: number }; costUsd: number });
    expect(rows.map((row) => row.status)).toEqual(["succeeded", "succeeded"]);
    // Two item requests and one search per item; the cost is what the simulator billed for all
    // three, the search's $0.01 included (control: the item's own requests alone cost less).
    const billed = [...items, ...searches].reduce((sum, record) => sum + record.costUsd, 0);
    const itemsOnly = items.reduce((sum, record) => sum + record.costUsd, 0);
    for (const row of rows) expect(row.usage.apiCalls).toBe(3);
    const total = rows.reduce((sum, row) => sum + row.costUsd, 0);
    expect(total).toBeCloseTo(billed, 9);
    expect(total - itemsOnly).toBeGreaterThanOrEqual(0.02);
  });
});
