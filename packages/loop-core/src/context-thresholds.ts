import type { ModelInfo } from "./model-catalog.js";

/** R-C7 (seed): the output reserve is capped at 20k even for models that can write more. */
const MAX_OUTPUT_RESERVE_TOKENS = 20_000;
/** R-C7 (seed): auto-compact fires this far below the effective window. */
const AUTOCOMPACT_BUFFER_TOKENS = 13_000;
/** R-C7 (seed): the hard limit leaves this much room so a manual /compact can still run. */
const MANUAL_COMPACT_BUFFER_TOKENS = 3_000;
/** R-C7, R-L11 (seed): the breaker that stopped the "compact-fail-retry" loop in production. */
export const MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES = 3;

export interface Thresholds {
  readonly contextWindow: number;
  readonly effectiveWindow: number;
  /** R-C4: auto-compact runs at or over this many tokens. */
  readonly autoCompact: number;
  /** R-C7: the hard limit (the loop's `blocking_limit` with auto-compact off). */
  readonly blockingLimit: number;
}

/** R-C7: the smallest auto-compact window a run may set (Claude Code's `--autocompact`: "at least 100k"). */
export const MIN_AUTOCOMPACT_WINDOW_TOKENS = 100_000;

/**
 * R-C7: effectiveWindow = min(contextWindow, autoCompactWindow) − min(maxOutput, 20k), and the two
 * lines below it. The one place both the loop (hard limit) and the compaction pipeline
 * (auto-compact line) read. `autoCompactWindow` (a run's cap, Claude Code's `--autocompact N`)
 * lowers both lines; the reported context window stays the model's.
 */
export function thresholdsFor(model: ModelInfo, autoCompactWindow?: number): Thresholds {
  const window =
    autoCompactWindow === undefined ? model.contextWindow : Math.min(model.contextWindow, autoCompactWindow);
  const effectiveWindow = window - Math.min(model.maxOutputTokens, MAX_OUTPUT_RESERVE_TOKENS);
  return {
    contextWindow: model.contextWindow,
    effectiveWindow,
    autoCompact: effectiveWindow - AUTOCOMPACT_BUFFER_TOKENS,
    blockingLimit: effectiveWindow - MANUAL_COMPACT_BUFFER_TOKENS,
  };
}
