import { describe, expect, it } from "vitest";
import { effectiveContextWindow, MODELS, ModelRegistry, resolveModel } from "./model-registry.js";

describe("R-D1: the model registry", () => {
  it("resolves ids and aliases of api doc §7", () => {
    expect(resolveModel("claude-haiku-4-5")?.id).toBe("claude-haiku-4-5-20251001");
    expect(resolveModel("claude-haiku-4-5-20251001")).toMatchObject({
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      inputPricePerMTok: 1,
      outputPricePerMTok: 5,
      minCacheableTokens: 4096,
    });
    expect(resolveModel("claude-opus-4-1")).toMatchObject({ maxOutputTokens: 32_000, retired: true });
    expect(resolveModel("claude-sonnet-4-6")).toMatchObject({
      contextWindow: 1_000_000,
      minCacheableTokens: 1024,
    });
    expect(resolveModel("claude-opus-5-5")).toMatchObject({ inputPricePerMTok: 4, outputPricePerMTok: 20 });
    expect(resolveModel("gpt-4")).toBeUndefined();
  });

  it("R-D3: minimum cacheable lengths per the prompt caching page", () => {
    const min = (id: string) => resolveModel(id)?.minCacheableTokens;
    expect(["claude-opus-4-8", "claude-sonnet-5", "claude-sonnet-4-6"].map(min)).toEqual([1024, 1024, 1024]);
    expect(["claude-opus-5", "claude-fable-5", "claude-fable-5-1"].map(min)).toEqual([512, 512, 512]);
    expect(min("claude-opus-4-7")).toBe(2048);
    expect(["claude-opus-4-6", "claude-opus-4-5", "claude-haiku-4-5"].map(min)).toEqual([4096, 4096, 4096]);
  });

  it("R-D3: the newer tokenizer (×1.3) on Opus 4.7+, Fable 5 and Sonnet 5, per the token counting page", () => {
    for (const id of [
      "claude-opus-4-7",
      "claude-opus-5-5",
      "claude-fable-5",
      "claude-sonnet-5",
      "claude-sonnet-5-5",
    ])
      expect(resolveModel(id)?.tokenFactor).toBe(1.3);
    for (const id of ["claude-opus-4-6", "claude-sonnet-4-6", "claude-haiku-4-5"])
      expect(resolveModel(id)?.tokenFactor).toBe(1);
  });

  it("records which thinking types each model accepts", () => {
    expect(resolveModel("claude-opus-4-7")?.thinking).toEqual({
      enabled: false,
      adaptive: true,
      disabled: true,
    });
    expect(resolveModel("claude-opus-4-5")?.thinking).toEqual({
      enabled: true,
      adaptive: false,
      disabled: true,
    });
    expect(resolveModel("claude-fable-5")?.thinking.disabled).toBe(false);
  });

  it("overrides replace a known id and add new ones (tiny context windows for tests)", () => {
    const base = MODELS.find((m) => m.id === "claude-haiku-4-5-20251001")!;
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

  it("Sonnet 4.5 (retired, kept in the registry) gets 1M context with the context-1m beta", () => {
    const sonnet = resolveModel("claude-sonnet-4-5")!;
    expect(effectiveContextWindow(sonnet, [])).toBe(200_000);
    expect(effectiveContextWindow(sonnet, ["context-1m-2025-08-07"])).toBe(1_000_000);
    expect(effectiveContextWindow(resolveModel("claude-haiku-4-5")!, ["context-1m-2025-08-07"])).toBe(
      200_000,
    );
  });
});
