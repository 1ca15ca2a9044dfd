import { describe, expect, it } from "vitest";
import { OptionsError } from "./options-error.js";
import { claudeCodeRequestDefaults, type RequestDefaultsInput } from "./request-defaults.js";
import { DEFAULT_MODEL } from "./tool-selection.js";

const base: RequestDefaultsInput = {
  model: DEFAULT_MODEL,
  modelOverrides: [],
  env: {},
  thinking: undefined,
  effort: undefined,
};

// The values are Claude Code 2.1.332's recorded requests (test/conformance/claude-cli): the
// harness proves them against the real CLI; these pin the rules for the cases it does not run.
describe("R-X2: Claude Code's request defaults", () => {
  it("the newest Opus: its whole output cap, adaptive thinking without its text, effort medium", () => {
    expect(DEFAULT_MODEL).toBe("claude-opus-5-5");
    expect(claudeCodeRequestDefaults(base)).toEqual({
      maxOutputTokens: 128_000,
      thinking: { type: "adaptive", display: "omitted" },
      effort: "medium",
    });
  });

  it("a model without adaptive thinking (Haiku 4.5): 32,000, extended thinking with the cap but one, no effort", () => {
    expect(claudeCodeRequestDefaults({ ...base, model: "claude-haiku-4-5" })).toEqual({
      maxOutputTokens: 32_000,
      thinking: { type: "enabled", budget_tokens: 31_999, display: "omitted" },
    });
  });

  it("the table keyed by family: claude-sonnet-4-6 gets 32,000 and effort high (env-default-model-aliases), a dated id its family's row", () => {
    expect(claudeCodeRequestDefaults({ ...base, model: "claude-sonnet-4-6" })).toEqual({
      maxOutputTokens: 32_000,
      thinking: { type: "adaptive", display: "omitted" },
      effort: "high",
    });
    expect(claudeCodeRequestDefaults({ ...base, model: "claude-haiku-4-5-20251001" })).toEqual(
      claudeCodeRequestDefaults({ ...base, model: "claude-haiku-4-5" }),
    );
    expect(claudeCodeRequestDefaults({ ...base, model: "claude-sonnet-5-5" })).toEqual(
      claudeCodeRequestDefaults(base),
    );
  });

  it("CLAUDE_CODE_MAX_OUTPUT_TOKENS sets the cap, never above the model's own", () => {
    expect(
      claudeCodeRequestDefaults({ ...base, env: { CLAUDE_CODE_MAX_OUTPUT_TOKENS: "4096" } }),
    ).toMatchObject({
      maxOutputTokens: 4096,
    });
    expect(
      claudeCodeRequestDefaults({
        ...base,
        model: "claude-haiku-4-5",
        env: { CLAUDE_CODE_MAX_OUTPUT_TOKENS: "900000" },
      }).maxOutputTokens,
    ).toBe(64_000);
  });

  it("CLAUDE_CODE_MAX_OUTPUT_TOKENS that is not a whole number is bad input naming the variable and the fix", () => {
    expect(() =>
      claudeCodeRequestDefaults({ ...base, env: { CLAUDE_CODE_MAX_OUTPUT_TOKENS: "lots" } }),
    ).toThrow(OptionsError);
    expect(() => claudeCodeRequestDefaults({ ...base, env: { CLAUDE_CODE_MAX_OUTPUT_TOKENS: "0" } })).toThrow(
      /CLAUDE_CODE_MAX_OUTPUT_TOKENS: "0" is not a whole number of tokens; give one of at least 1, e.g. 32000/,
    );
  });

  it("thinking turned off stays off (and effort drops the levels that need thinking); given thinking and effort win", () => {
    expect(claudeCodeRequestDefaults({ ...base, thinking: "off" })).toEqual({
      maxOutputTokens: 128_000,
      effort: "medium",
    });
    expect(
      claudeCodeRequestDefaults({
        ...base,
        thinking: { type: "enabled", budget_tokens: 2048 },
        effort: "high",
      }),
    ).toEqual({
      maxOutputTokens: 128_000,
      thinking: { type: "enabled", budget_tokens: 2048 },
      effort: "high",
    });
  });

  it("a model the table does not know gets no thinking or effort it might refuse", () => {
    expect(
      claudeCodeRequestDefaults({
        ...base,
        model: "gateway-model",
        modelOverrides: [
          {
            id: "gateway-model",
            contextWindow: 100_000,
            maxOutputTokens: 16_000,
            inputPricePerMTok: 1,
            outputPricePerMTok: 1,
          },
        ],
      }),
    ).toEqual({ maxOutputTokens: 16_000 });
  });
});
