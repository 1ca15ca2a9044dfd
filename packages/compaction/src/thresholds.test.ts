import { getModelInfo, type ModelInfo } from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { decideAutoCompact, thresholdsFor } from "./thresholds.js";

const model = (contextWindow: number, maxOutputTokens: number): ModelInfo => ({
  id: "m",
  contextWindow,
  maxOutputTokens,
  inputPricePerMTok: 1,
  outputPricePerMTok: 1,
});

const tracking = (consecutiveFailures = 0) => ({
  compacted: false,
  turnCounter: 0,
  turnId: "t",
  consecutiveFailures,
});

describe("thresholds", () => {
  it.each([
    // contextWindow, maxOutput, effective, autoCompact, blocking
    [200_000, 64_000, 180_000, 167_000, 177_000],
    [200_000, 8_000, 192_000, 179_000, 189_000],
    [1_000_000, 128_000, 980_000, 967_000, 977_000],
    [24_000, 4_000, 20_000, 7_000, 17_000],
  ])(
    "R-C7: window %i, max output %i → effective %i, auto-compact %i, blocking %i",
    (window, out, effective, auto, blocking) => {
      expect(thresholdsFor(model(window, out))).toEqual({
        contextWindow: window,
        effectiveWindow: effective,
        autoCompact: auto,
        blockingLimit: blocking,
      });
    },
  );

  it("R-C7: thresholds come from the model catalog", () => {
    expect(thresholdsFor(getModelInfo("claude-haiku-4-5")).autoCompact).toBe(167_000);
    expect(thresholdsFor(getModelInfo("claude-opus-4-6")).blockingLimit).toBe(977_000);
  });
});

describe("decideAutoCompact", () => {
  const m = model(24_000, 4_000);
  it.each([
    ["below the line", 6_999, 0, true, "repl_main_thread", "below_threshold"],
    ["at the line", 7_000, 0, true, "repl_main_thread", "compact"],
    ["disabled", 9_000, 0, false, "repl_main_thread", "disabled"],
    ["two failures: still tries", 9_000, 2, true, "repl_main_thread", "compact"],
    ["three failures: breaker open", 9_000, 3, true, "repl_main_thread", "breaker_open"],
    ["the compact agent itself", 30_000, 0, true, "compact", "exempt_source"],
    ["the session-memory agent", 30_000, 0, true, "session_memory", "exempt_source"],
  ] as const)("R-C4/R-C7/R-L11: %s", (_name, tokens, failures, enabled, querySource, expected) => {
    expect(
      decideAutoCompact({ tokens, model: m, tracking: tracking(failures), enabled, querySource }).type,
    ).toBe(expected);
  });

  it("R-C7: a run's auto-compact window moves the line (min(window, N) − min(max output, 20k) − 13k)", () => {
    const big = model(1_000_000, 64_000);
    const at = (tokens: number, autoCompactWindow?: number) =>
      decideAutoCompact({
        tokens,
        model: big,
        autoCompactWindow,
        tracking: tracking(),
        enabled: true,
        querySource: "repl_main_thread",
      }).type;
    expect(at(117_000)).toBe("below_threshold");
    expect(at(116_999, 150_000)).toBe("below_threshold");
    expect(at(117_000, 150_000)).toBe("compact");
  });
});
