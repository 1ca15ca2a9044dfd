import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator } from "./server.js";
import type { Simulator } from "./types.js";

// The Models API (R-D4): https://platform.claude.com/docs/en/api/models/list and the models
// overview's "Use the Models API" (max_input_tokens, max_tokens, capabilities).
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe("R-D4: the Models API pages and says what each model can do", () => {
  it("R-D4: limit/after_id/before_id paging, newest first; capability fields from the model table", async () => {
    sim = await startSimulator();
    const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    const first = await client.models.list({ limit: 3 });
    // Release dates from the model pages: Fable 5.2 (Nov 9), Haiku 5.5 (Oct 7), Opus 5.5 (Sep 24);
    // Fable 5.1 (Sep 1) comes after them.
    expect(first.data.map((m) => m.id)).toEqual(["claude-fable-5-2", "claude-haiku-5-5", "claude-opus-5-5"]);
    expect(first.has_more).toBe(true);
    const all: string[] = [];
    for await (const model of client.models.list({ limit: 5 })) all.push(model.id);
    expect(all).toHaveLength(16);
    expect(new Set(all).size).toBe(16);
    const second = await client.models.list({ limit: 2, after_id: first.last_id ?? "" });
    expect(second.data[0]?.id).toBe(all[3]);
    const before = await client.models.list({ limit: 2, before_id: all[3] ?? "" });
    expect(before.data.map((m) => m.id)).toEqual([all[1], all[2]]);

    const haiku = await client.models.retrieve("claude-haiku-4-5");
    expect(haiku).toMatchObject({
      id: "claude-haiku-4-5-20251001",
      max_input_tokens: 200_000,
      max_tokens: 64_000,
      lifecycle: "active",
      capabilities: { effort: { supported: false }, thinking: { types: { adaptive: { supported: false } } } },
    });
    const opus46 = await client.models.retrieve("claude-opus-4-6");
    expect(opus46.capabilities?.effort).toMatchObject({
      max: { supported: true },
      xhigh: { supported: false },
    });
    const retired = await client.models.retrieve("claude-opus-4-1");
    expect(retired).toMatchObject({ lifecycle: "retired", retires_at: "2026-08-05T00:00:00Z" });
  });
});
