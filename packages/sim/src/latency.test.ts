import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { firstTokenDelayMs, outputDelayMs, REALISTIC_LATENCY, timingFor } from "./latency.js";
import { resolveModel } from "./model-registry.js";
import { startSimulator } from "./server.js";

describe("the latency model", () => {
  it("time to first token grows with uncached input; output time with output tokens", () => {
    const timing = { ttftMs: 500, prefillTokensPerSecond: 10_000, outputTokensPerSecond: 50 };
    expect(firstTokenDelayMs(timing, 0)).toBe(500);
    expect(firstTokenDelayMs(timing, 20_000)).toBe(2500);
    expect(outputDelayMs(timing, 100)).toBe(2000);
  });

  it("realistic defaults: small models are faster than large ones", () => {
    const haiku = timingFor(REALISTIC_LATENCY, resolveModel("claude-haiku-4-5")!);
    const sonnet = timingFor(REALISTIC_LATENCY, resolveModel("claude-sonnet-4-6")!);
    const opus = timingFor(REALISTIC_LATENCY, resolveModel("claude-opus-4-6")!);
    expect(haiku.ttftMs).toBeLessThan(sonnet.ttftMs);
    expect(sonnet.ttftMs).toBeLessThan(opus.ttftMs);
    expect(haiku.outputTokensPerSecond).toBeGreaterThan(opus.outputTokensPerSecond);
  });

  it("per-model timings override the default", () => {
    const model = {
      default: { ttftMs: 1, prefillTokensPerSecond: 1, outputTokensPerSecond: 1 },
      perModel: { x: { ttftMs: 9, prefillTokensPerSecond: 9, outputTokensPerSecond: 9 } },
    };
    expect(timingFor(model, { ...resolveModel("claude-haiku-4-5")!, id: "x" }).ttftMs).toBe(9);
    expect(timingFor(model, resolveModel("claude-haiku-4-5")!).ttftMs).toBe(1);
  });

  it("a stream paced by a latency model delivers the same reply as an unpaced one", async () => {
    const sim = await startSimulator({
      brain: () => ({ content: [{ type: "text", text: "paced words arrive in several deltas over time" }] }),
      latency: { default: { ttftMs: 5, prefillTokensPerSecond: 1e6, outputTokensPerSecond: 5000 } },
    });
    try {
      const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
      const message = await client.messages
        .stream({ model: "claude-haiku-4-5", max_tokens: 100, messages: [{ role: "user", content: "x" }] })
        .finalMessage();
      expect(message.content).toMatchObject([
        { type: "text", text: "paced words arrive in several deltas over time" },
      ]);
      const [record] = sim.requests();
      expect(record?.firstByteAt).not.toBeNull();
    } finally {
      await sim.close();
    }
  });
});
