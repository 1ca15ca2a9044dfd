import type { ModelSpec } from "./model-registry.js";

/** Timing of one model's replies. */
export interface ModelTiming {
  /** Time to first token for a fully cached prompt. */
  ttftMs: number;
  /** Prompt tokens processed per second; uncached input tokens add to the time to first token. */
  prefillTokensPerSecond: number;
  /** Output tokens streamed per second. */
  outputTokensPerSecond: number;
}

/** The latency model: a default timing plus per-model overrides (by model id). */
export interface LatencyModel {
  default: ModelTiming;
  perModel?: Readonly<Record<string, ModelTiming>>;
}

/**
 * Plausible figures, not measurements of the real service: small models start and stream
 * faster. Used by `latency: "realistic"`.
 */
export const REALISTIC_LATENCY: LatencyModel = {
  default: { ttftMs: 700, prefillTokensPerSecond: 20_000, outputTokensPerSecond: 70 },
  perModel: Object.fromEntries(
    ["claude-haiku-4-5-20251001", "claude-haiku-5-5"].map((id) => [
      id,
      { ttftMs: 350, prefillTokensPerSecond: 40_000, outputTokensPerSecond: 150 },
    ]),
  ),
};

export function timingFor(model: LatencyModel, spec: ModelSpec): ModelTiming {
  const perModel = model.perModel?.[spec.id];
  if (perModel) return perModel;
  if (model === REALISTIC_LATENCY && spec.id.includes("opus")) {
    return { ttftMs: 1200, prefillTokensPerSecond: 12_000, outputTokensPerSecond: 45 };
  }
  return model.default;
}

/** Delay before the first byte: the base TTFT plus prefill of the uncached input. */
export function firstTokenDelayMs(timing: ModelTiming, uncachedInputTokens: number): number {
  return timing.ttftMs + (uncachedInputTokens / timing.prefillTokensPerSecond) * 1000;
}

/** Delay for streaming `tokens` output tokens. */
export function outputDelayMs(timing: ModelTiming, tokens: number): number {
  return (tokens / timing.outputTokensPerSecond) * 1000;
}
