import type { AutoCompactTracking, ModelInfo } from "@forkloop/loop-core";

/** R-C7 (seed): the output reserve is capped at 20k even for models that can write more. */
export const MAX_OUTPUT_RESERVE_TOKENS = 20_000;
/** R-C7 (seed): auto-compact fires this far below the effective window. */
export const AUTOCOMPACT_BUFFER_TOKENS = 13_000;
/** R-C7 (seed): the hard limit leaves this much room so a manual /compact can still run. */
export const MANUAL_COMPACT_BUFFER_TOKENS = 3_000;
/** R-C7, R-L11 (seed): the breaker that stopped the "compact-fail-retry" loop in production. */
export const MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES = 3;

export interface Thresholds {
  readonly contextWindow: number;
  readonly effectiveWindow: number;
  readonly autoCompact: number;
  readonly blockingLimit: number;
}

/** R-C7: effectiveWindow = contextWindow − min(maxOutput, 20k); the two lines below it. */
export function thresholdsFor(model: ModelInfo): Thresholds {
  const effectiveWindow = model.contextWindow - Math.min(model.maxOutputTokens, MAX_OUTPUT_RESERVE_TOKENS);
  return {
    contextWindow: model.contextWindow,
    effectiveWindow,
    autoCompact: effectiveWindow - AUTOCOMPACT_BUFFER_TOKENS,
    blockingLimit: effectiveWindow - MANUAL_COMPACT_BUFFER_TOKENS,
  };
}

export function autoCompactThreshold(model: ModelInfo): number {
  return thresholdsFor(model).autoCompact;
}

export function blockingLimit(model: ModelInfo): number {
  return thresholdsFor(model).blockingLimit;
}

export type AutoCompactDecision =
  | { readonly type: "below_threshold" }
  | { readonly type: "disabled" }
  /** The compact and session-memory agents must run to reduce tokens: never compact them (R-L3). */
  | { readonly type: "exempt_source" }
  | { readonly type: "breaker_open"; readonly consecutiveFailures: number }
  | { readonly type: "compact" };

/** The pure "should auto-compact run now" decision (R-C4, R-C7, R-L11). */
export function decideAutoCompact(input: {
  readonly tokens: number;
  readonly model: ModelInfo;
  readonly tracking: AutoCompactTracking;
  readonly enabled: boolean;
  readonly querySource: string;
}): AutoCompactDecision {
  if (input.querySource === "compact" || input.querySource === "session_memory")
    return { type: "exempt_source" };
  if (!input.enabled) return { type: "disabled" };
  if (input.tokens < autoCompactThreshold(input.model)) return { type: "below_threshold" };
  if (input.tracking.consecutiveFailures >= MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES) {
    return { type: "breaker_open", consecutiveFailures: input.tracking.consecutiveFailures };
  }
  return { type: "compact" };
}
