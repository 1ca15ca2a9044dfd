import { describe, expect, it } from "vitest";
import { effectiveContextWindow, MODELS, ModelRegistry, resolveModel } from "./model-registry.js";

describe("issue 2 point 3: the model registry", () => {
  it("resolves ids and aliases of api doc §7", () => {
    expect(resolveModel("claude-haiku-4-5")?.id).toBe("claude-haiku-4-5-20251001");
    expect(resolveModel("claude-haiku-4-5-20251001")).toMatchObject({
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      inputPricePerMTok: 1,
      outputPricePerMTok: 5,
      minCacheableTokens: 4096,
    });
    expect(resolveModel("claude-opus-4-1")).toMatchObject({ maxOutputTokens: 32_000, inputPricePerMTok: 15 });
    expect(resolveModel("claude-sonnet-4-6")).toMatchObject({
      contextWindow: 1_000_000,
      minCacheableTokens: 2048,
    });
    expect(resolveModel("claude-opus-5-5")).toMatchObject({ inputPricePerMTok: 4, outputPricePerMTok: 20 });
    expect(resolveModel("gpt-4")).toBeUndefined();
  });

  it("uses 1024 as the (unconfirmed) minimum cacheable length of the 4.8 / 5.x models", () => {
    for (const id of ["claude-opus-4-8", "claude-sonnet-5", "claude-fable-5-2", "claude-haiku-5-5"]) {
      expect(resolveModel(id)?.minCacheableTokens).toBe(1024);
    }
  });

  it("records which thinking types each model accepts", () => {
    expect(resolveModel("claude-opus-4-7")?.thinking).toEqual({
      enabled: false,
      adaptive: true,
      disabled: true,
    });
    expect(resolveModel("claude-sonnet-4-5")?.thinking).toEqual({
      enabled: true,
      adaptive: false,
      disabled: true,
    });
    expect(resolveModel("claude-fable-5")?.thinking.disabled).toBe(false);
  });

  it("overrides replace a known id and add new ones (tiny context windows for tests)", () => {
    const base = MODELS[0]!;
    const registry = new ModelRegistry([
      { ...base, contextWindow: 100 },
      { ...base, id: "tiny", aliases: ["tiny-alias"], contextWindow: 50 },
    ]);
    expect(registry.resolve(base.id)?.contextWindow).toBe(100);
    expect(registry.resolve("claude-haiku-4-5")?.contextWindow).toBe(100);
    expect(registry.resolve("tiny-alias")?.contextWindow).toBe(50);
    expect(resolveModel(base.id)?.contextWindow).toBe(200_000);
  });

  it("an override of a model's id replaces its aliases too", () => {
    const registry = new ModelRegistry([
      { ...resolveModel("claude-haiku-4-5-20251001")!, aliases: [], contextWindow: 1_000 },
    ]);
    expect(registry.resolve("claude-haiku-4-5-20251001")?.contextWindow).toBe(1_000);
    expect(registry.resolve("claude-haiku-4-5")).toBeUndefined();
    expect(registry.list().filter((spec) => spec.id === "claude-haiku-4-5-20251001")).toHaveLength(1);
  });

  it("Sonnet 4.5 gets 1M context with the context-1m beta", () => {
    const sonnet = resolveModel("claude-sonnet-4-5")!;
    expect(effectiveContextWindow(sonnet, [])).toBe(200_000);
    expect(effectiveContextWindow(sonnet, ["context-1m-2025-08-07"])).toBe(1_000_000);
    expect(effectiveContextWindow(resolveModel("claude-haiku-4-5")!, ["context-1m-2025-08-07"])).toBe(
      200_000,
    );
  });
});
