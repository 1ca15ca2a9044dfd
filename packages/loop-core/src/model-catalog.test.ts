import { describe, expect, it } from "vitest";
import { effortForModel, getModelInfo, listModels, resolveModelAlias } from "./model-catalog.js";
import { buildModelRequestBody } from "./model-client.js";

describe("R-D1: the catalog is the model table less retired models", () => {
  it("R-D1: offers no retired model; aliases name the newest current model of each family", () => {
    const ids = listModels().map((m) => m.id);
    expect(ids).not.toContain("claude-opus-4-1-20250805");
    expect(ids).not.toContain("claude-sonnet-4-5-20250929");
    expect(ids).toContain("claude-opus-5-5");
    expect(resolveModelAlias("opus")).toBe("claude-opus-5-5");
    expect(resolveModelAlias("sonnet")).toBe("claude-sonnet-5-5");
    expect(resolveModelAlias("haiku[1m]")).toBe("claude-haiku-5-5");
    expect(getModelInfo("claude-haiku-4-5")).toMatchObject({
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
    });
  });
});

describe("R-D2: effort reaches a model only at a level it takes", () => {
  it.each([
    ["claude-haiku-4-5", "high", false, undefined],
    ["claude-opus-4-6", "xhigh", false, "high"],
    ["claude-sonnet-4-6", "max", false, "max"],
    ["claude-opus-4-5", "max", false, "high"],
    ["claude-opus-5", "max", true, "high"],
    ["claude-opus-5", "max", false, "max"],
    ["claude-opus-5-5", "xhigh", false, "xhigh"],
    ["some-future-model", "xhigh", false, "xhigh"],
  ] as const)("R-D2: %s asked %s (thinking off: %s) → %s", (model, asked, off, sent) => {
    expect(effortForModel(model, asked, off)).toBe(sent);
  });

  it("R-D2: the request body drops effort for a model that takes none", () => {
    const base = {
      messages: [],
      systemPrompt: [],
      tools: [],
      maxOutputTokens: 100,
      querySource: "test",
      signal: new AbortController().signal,
      fallbackAvailable: false,
      parentUuid: null,
      uuid: () => "u",
      outputConfig: { effort: "xhigh" as const },
    };
    const haiku = buildModelRequestBody({ ...base, model: "claude-haiku-4-5" } as never) as {
      output_config?: unknown;
    };
    expect(haiku.output_config).toBeUndefined();
    const opus46 = buildModelRequestBody({ ...base, model: "claude-opus-4-6" } as never) as {
      output_config?: unknown;
    };
    expect(opus46.output_config).toEqual({ effort: "high" });
  });
});
