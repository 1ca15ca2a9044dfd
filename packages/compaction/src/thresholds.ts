import {
  type AutoCompactTracking,
  MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES,
  type ModelInfo,
  thresholdsFor,
} from "@forkloop/loop-core";

// R-C7: the thresholds live in loop-core (its hard limit reads them too); re-exported here.
export {
  MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES,
  type Thresholds,
  thresholdsFor,
} from "@forkloop/loop-core";

function autoCompactThreshold(model: ModelInfo, autoCompactWindow?: number): number {
  return thresholdsFor(model, autoCompactWindow).autoCompact;
}

/**
 * The forks compaction itself runs (the summary, session memory): they send the parent's prefix
 * byte for byte (R-F3), are never compacted, and are no sub-agent a hook is told of as started.
 */
export function isCompactionFork(querySource: string): boolean {
  return querySource === "compact" || querySource === "session_memory";
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
  /** R-C7: the run's window cap, if any. */
  readonly autoCompactWindow?: number | undefined;
  readonly tracking: AutoCompactTracking;
  readonly enabled: boolean;
  readonly querySource: string;
}): AutoCompactDecision {
  if (isCompactionFork(input.querySource)) return { type: "exempt_source" };
  if (!input.enabled) return { type: "disabled" };
  if (input.tokens < autoCompactThreshold(input.model, input.autoCompactWindow))
    return { type: "below_threshold" };
  if (input.tracking.consecutiveFailures >= MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES) {
    return { type: "breaker_open", consecutiveFailures: input.tracking.consecutiveFailures };
  }
  return { type: "compact" };
}
