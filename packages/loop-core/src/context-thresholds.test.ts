import { describe, expect, it } from "vitest";
import { thresholdsFor } from "./context-thresholds.js";
import type { ModelInfo } from "./model-catalog.js";

const model = (contextWindow: number, maxOutputTokens: number): ModelInfo => ({
  id: "m",
  contextWindow,
  maxOutputTokens,
  inputPricePerMTok: 1,
  outputPricePerMTok: 1,
});

describe("thresholdsFor with an auto-compact window", () => {
  it("R-C7: a window below the model's lowers the effective window, the auto-compact line and the hard limit; the context window stays the model's", () => {
    // Claude Code's rule: min(context window, N) − min(max output, 20k).
    expect(thresholdsFor(model(1_000_000, 128_000), 150_000)).toEqual({
      contextWindow: 1_000_000,
      effectiveWindow: 130_000,
      autoCompact: 117_000,
      blockingLimit: 127_000,
    });
    expect(thresholdsFor(model(200_000, 8_000), 150_000)).toEqual({
      contextWindow: 200_000,
      effectiveWindow: 142_000,
      autoCompact: 129_000,
      blockingLimit: 139_000,
    });
  });

  it("R-C7: a window at or above the model's changes nothing, and none is the model's window", () => {
    const info = model(200_000, 64_000);
    expect(thresholdsFor(info, 500_000)).toEqual(thresholdsFor(info));
    expect(thresholdsFor(info, 200_000)).toEqual(thresholdsFor(info));
    expect(thresholdsFor(info).autoCompact).toBe(167_000);
  });
});
