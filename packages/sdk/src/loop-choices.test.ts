import { describe, expect, it } from "vitest";
import { autoCompactWindowFromEnv, resolveLoopChoices } from "./loop-choices.js";

describe("CLAUDE_CODE_AUTO_COMPACT_WINDOW", () => {
  it("R-C7: read as Claude Code 2.1.332 reads it — 500k, 1.5m, whole numbers (200 is 200 tokens, not 200k); under 100k is the 100k minimum, no size is ignored, each with its warning", () => {
    const tokens = (value: string) => autoCompactWindowFromEnv(value).tokens;
    expect(tokens("500k")).toBe(500_000);
    expect(tokens(" 1.5M ")).toBe(1_500_000);
    expect(tokens("250000")).toBe(250_000);
    expect(tokens("250,000")).toBe(250_000);
    expect(tokens("200")).toBe(100_000);
    expect(tokens("99999")).toBe(100_000);
    expect(autoCompactWindowFromEnv("0.5").tokens).toBeUndefined();
    expect(autoCompactWindowFromEnv("").tokens).toBeUndefined();
    expect(autoCompactWindowFromEnv(undefined)).toEqual({});
    expect(autoCompactWindowFromEnv("500k").warning).toBeUndefined();
    expect(autoCompactWindowFromEnv("1").warning).toBe(
      'CLAUDE_CODE_AUTO_COMPACT_WINDOW="1" reads as 1 token, so Claude Code treats it as the 100k minimum. Set it to a size of at least 100k, such as 200k or 200000, or unset it.',
    );
    expect(autoCompactWindowFromEnv("a window as big as the model's own, please").warning).toBe(
      'CLAUDE_CODE_AUTO_COMPACT_WINDOW="a window as big as the model?s o\u2026" isn\'t a usable size, so Claude Code ignores it. Set it to a size of at least 100k, such as 200k or 200000, or unset it.',
    );
  });

  it("R-C7: the variable wins over the autoCompactWindow option (--autocompact); unusable, the option stands", () => {
    const settings = {} as Parameters<typeof resolveLoopChoices>[1];
    expect(
      resolveLoopChoices({ autoCompactWindow: 300_000 }, settings, {
        CLAUDE_CODE_AUTO_COMPACT_WINDOW: "150k",
      }).autoCompactWindow,
    ).toBe(150_000);
    expect(
      resolveLoopChoices({ autoCompactWindow: 300_000 }, settings, {
        CLAUDE_CODE_AUTO_COMPACT_WINDOW: "lots",
      }).autoCompactWindow,
    ).toBe(300_000);
    expect(resolveLoopChoices({}, settings).autoCompactWindow).toBeUndefined();
  });
});
