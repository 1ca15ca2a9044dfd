import { describe, expect, it } from "vitest";
import {
  costUsd,
  effortForModel,
  getModelInfo,
  listModels,
  resolveModelAlias,
  thinkingForModel,
} from "./model-catalog.js";
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
    expect(resolveModelAlias("fable")).toBe("claude-fable-5-2");
    expect(getModelInfo("claude-haiku-4-5")).toMatchObject({
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
    });
  });
});

describe("R-X2: Claude Code's family model variables", () => {
  it("R-X2: ANTHROPIC_DEFAULT_{OPUS,SONNET,HAIKU}_MODEL name what their alias resolves to ([1m] too); blank or absent, the catalog's newest; a full id is never replaced", () => {
    const env = {
      ANTHROPIC_DEFAULT_OPUS_MODEL: "claude-opus-4-8",
      ANTHROPIC_DEFAULT_SONNET_MODEL: " claude-sonnet-4-6 ",
      ANTHROPIC_DEFAULT_HAIKU_MODEL: "",
    };
    expect(resolveModelAlias("opus", env)).toBe("claude-opus-4-8");
    expect(resolveModelAlias("Sonnet[1m]", env)).toBe("claude-sonnet-4-6");
    expect(resolveModelAlias("haiku", env)).toBe("claude-haiku-5-5");
    expect(resolveModelAlias("fable", env)).toBe("claude-fable-5-2");
    expect(resolveModelAlias("claude-sonnet-5-5", env)).toBe("claude-sonnet-5-5");
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

// Batch processing page (https://platform.claude.com/docs/en/build-with-claude/batch-processing):
// "All usage is charged at 50% of the standard API prices"; pricing page: a 1-hour cache write
// costs 2× the input price, a 5-minute one 1.25×, a read 0.1×.
describe("R-B9: a Message Batches answer costs half; cache writes by their TTL", () => {
  it("R-B9: service_tier batch halves input, cache writes of both TTLs, reads and output", () => {
    const info = getModelInfo("claude-sonnet-4-6");
    const usage = {
      input_tokens: 1_000,
      output_tokens: 500,
      cache_creation_input_tokens: 3_000,
      cache_read_input_tokens: 10_000,
      cache_creation: { ephemeral_5m_input_tokens: 1_000, ephemeral_1h_input_tokens: 2_000 },
    };
    const units = 1_000 + 1_000 * 1.25 + 2_000 * 2 + 10_000 * 0.1;
    const standard = (units * info.inputPricePerMTok + 500 * info.outputPricePerMTok) / 1_000_000;
    expect(costUsd(info, usage)).toBeCloseTo(standard, 12);
    expect(costUsd(info, { ...usage, service_tier: "standard" })).toBeCloseTo(standard, 12);
    expect(costUsd(info, { ...usage, service_tier: "batch" })).toBeCloseTo(standard / 2, 12);
  });
});

// Haiku 5.5's overview page (https://platform.claude.com/docs/en/models/haiku-5-5/overview): input
// $0.10 / $0.50 per MTok and output $0.50 / $2.50 for prompts up to / over 100,000 tokens.
describe("R-D1: a model priced by prompt length costs its prompt's band", () => {
  it("R-D1: Haiku 5.5 over 100,000 prompt tokens (cache writes and reads counted) pays $0.50 / $2.50", () => {
    const info = getModelInfo("claude-haiku-5-5");
    const at = (input: number, read: number) =>
      costUsd(info, { input_tokens: input, output_tokens: 1_000, cache_read_input_tokens: read });
    expect(at(100_000, 0)).toBeCloseTo((100_000 * 0.1 + 1_000 * 0.5) / 1_000_000, 12);
    expect(at(100_001, 0)).toBeCloseTo((100_001 * 0.5 + 1_000 * 2.5) / 1_000_000, 12);
    expect(at(1_000, 99_001)).toBeCloseTo((1_000 * 0.5 + 99_001 * 0.05 + 1_000 * 2.5) / 1_000_000, 12);
    expect(costUsd(info, { input_tokens: 200_000, output_tokens: 0, service_tier: "batch" })).toBeCloseTo(
      0.05,
      12,
    );
    expect(
      costUsd(getModelInfo("claude-sonnet-4-6"), { input_tokens: 200_000, output_tokens: 0 }),
    ).toBeCloseTo(0.6, 12);
  });
});

// Opus 5.5's overview page: cache read $0.20 / MTok on $4 input; Fable 5.1's: cache reads cut to a
// quarter of Fable 5's $1.00 ($0.25 on $10); other models read at 0.1× (pricing page).
describe("R-D1: a cache read costs the model's own share of the input price", () => {
  it("R-D1: Opus 5.5 reads at 0.05×, Fable 5.1 at 0.025×, Fable 5 and Sonnet 4.6 at 0.1×", () => {
    const read = (model: string) =>
      costUsd(getModelInfo(model), { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 1_000_000 });
    expect(read("claude-opus-5-5")).toBeCloseTo(0.2, 12);
    expect(read("claude-fable-5-1")).toBeCloseTo(0.25, 12);
    expect(read("claude-fable-5")).toBeCloseTo(1, 12);
    expect(read("claude-sonnet-4-6")).toBeCloseTo(0.3, 12);
  });
});

describe("R-L17, R-X2: thinking follows the session onto another model as that model takes it", () => {
  it("adaptive becomes a budget on Haiku 4.5, a budget becomes adaptive on Opus 5.5, the display kept", () => {
    expect(thinkingForModel("claude-haiku-4-5", { type: "adaptive", display: "omitted" }, 64_000)).toEqual({
      type: "enabled",
      budget_tokens: 63_999,
      display: "omitted",
    });
    expect(thinkingForModel("claude-opus-5-5", { type: "enabled", budget_tokens: 4000 }, 128_000)).toEqual({
      type: "adaptive",
    });
    expect(thinkingForModel("claude-sonnet-4-6", { type: "adaptive" }, 8000)).toEqual({ type: "adaptive" });
    expect(thinkingForModel("claude-haiku-4-5", { type: "adaptive" }, 1000)).toBeUndefined();
    expect(thinkingForModel("some-gateway-model", { type: "adaptive" }, 8000)).toEqual({ type: "adaptive" });
  });
});
