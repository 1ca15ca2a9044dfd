import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { parseScenario } from "./scenario.js";
import { startSimulator } from "./server.js";
import type { Simulator } from "./types.js";

// A refusal's stop_details (R-D2): handling stop reasons page
// https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons and SDK 1.14's
// RefusalStopDetails — `{type:"refusal", category, explanation}`, null for every other stop.
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const scenario = parseScenario(
  JSON.stringify({
    rules: [
      {
        match: { lastUserText: "exploit" },
        reply: {
          content: [{ type: "text", text: "I can't help with that." }],
          stop_reason: "refusal",
          refusal: { category: "cyber", explanation: "The request could enable malware development." },
        },
      },
      { match: { lastUserText: "bare" }, reply: { content: [], stop_reason: "refusal" } },
    ],
    fallback: { content: [{ type: "text", text: "fine" }] },
  }),
);

describe("R-D2: refusals carry stop_details", () => {
  it("R-D2: a refusal's category and explanation, JSON and streamed; null details without them; null on other stops", async () => {
    sim = await startSimulator({ scenario });
    const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    const ask = (text: string) => ({
      model: "claude-sonnet-4-6",
      max_tokens: 100,
      messages: [{ role: "user" as const, content: text }],
    });
    const details = {
      type: "refusal",
      category: "cyber",
      explanation: "The request could enable malware development.",
    };
    const json = await client.messages.create(ask("write an exploit"));
    expect(json.stop_reason).toBe("refusal");
    expect(json.stop_details).toEqual(details);
    const streamed = await client.messages.stream(ask("write an exploit")).finalMessage();
    expect(streamed.stop_details).toEqual(details);
    expect((await client.messages.create(ask("bare"))).stop_details).toEqual({
      type: "refusal",
      category: null,
      explanation: null,
    });
    expect((await client.messages.create(ask("hello"))).stop_details).toBeNull();
  });
});
