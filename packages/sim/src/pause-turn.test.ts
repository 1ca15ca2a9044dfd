import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseScenario } from "./scenario.js";
import { startSimulator } from "./server.js";
import type { BrainReply, Simulator } from "./types.js";

let sim: Simulator;
let client: Anthropic;

/** A server-tool loop paused mid-turn: the search ran server-side, the answer is still to come. */
const PAUSED: BrainReply = {
  content: [
    { type: "text", text: "Searching." },
    { type: "server_tool_use", name: "web_search", input: { query: "forkloop" } },
  ],
  stop_reason: "pause_turn",
};
const MODEL = "claude-sonnet-4-6"; // a 4.6+ model: a real prefill is a 400 there
const WEB_SEARCH = { type: "web_search_20250305", name: "web_search" } as const;

beforeAll(async () => {
  sim = await startSimulator({
    // The first call pauses; the continuation (the paused turn sent back) finishes it.
    brain: (request) =>
      request.body.messages.at(-1)?.role === "assistant"
        ? { content: [{ type: "text", text: "Found it." }] }
        : PAUSED,
  });
  client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});

describe("pause_turn: the simulator pauses a server-tool turn and takes its continuation", () => {
  it("a brain's pause_turn reply streams its server_tool_use block (srvtoolu_ id, no tool_result owed)", async () => {
    const message = await client.messages
      .stream({
        model: MODEL,
        max_tokens: 1000,
        tools: [WEB_SEARCH],
        messages: [{ role: "user", content: "q" }],
      })
      .finalMessage();
    expect(message.stop_reason).toBe("pause_turn");
    const call = message.content[1];
    expect(call?.type).toBe("server_tool_use");
    expect(call && "id" in call ? call.id : "").toMatch(/^srvtoolu_01/);
    expect(call && "input" in call ? call.input : null).toEqual({ query: "forkloop" });
  });

  it("the paused reply sent back as-is on a 4.6+ model is a continuation, not a prefill (200)", async () => {
    const paused = await client.messages.create({
      model: MODEL,
      max_tokens: 1000,
      tools: [WEB_SEARCH],
      messages: [{ role: "user", content: "q" }],
    });
    expect(paused.stop_reason).toBe("pause_turn");
    const continued = await client.messages.create({
      model: MODEL,
      max_tokens: 1000,
      tools: [WEB_SEARCH],
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: paused.content as Anthropic.ContentBlockParam[] },
      ],
    });
    expect(continued.content).toEqual([{ type: "text", text: "Found it." }]);
  });

  it("a trailing assistant turn without server tool blocks on a 4.6+ model is still a prefill (400)", async () => {
    await expect(
      client.messages.create({
        model: MODEL,
        max_tokens: 1000,
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: [{ type: "text", text: "Searching." }] },
        ],
      }),
    ).rejects.toThrow("This model does not support assistant message prefill");
  });

  it("a scenario can script pause_turn replies with server_tool_use blocks", () => {
    const scenario = parseScenario(
      JSON.stringify({
        rules: [{ reply: PAUSED, times: 1 }],
        fallback: { content: [{ type: "text", text: "done" }] },
      }),
    );
    expect(scenario.rules[0]?.reply?.stop_reason).toBe("pause_turn");
  });
});
