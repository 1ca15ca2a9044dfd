import type { CacheSafeParams } from "./cache-safe-params.js";
import type { Message, SystemMessage } from "./messages.js";
import type { Tool } from "./tool.js";

/** Auto-compact bookkeeping carried in LoopState (R-L4). */
export interface AutoCompactTracking {
  readonly compacted: boolean;
  readonly turnCounter: number;
  readonly turnId: string;
  /** Circuit breaker: auto-compact is skipped once this reaches 3 (R-C4, R-L11). */
  readonly consecutiveFailures: number;
}

export interface ContextStageInput {
  readonly messages: readonly Message[];
  readonly model: string;
  readonly querySource: string;
  readonly tools: readonly Tool[];
  readonly tracking: AutoCompactTracking;
  /** The latest cache-safe parameters, for a compact request that reuses the parent prefix (R-F3). */
  readonly cacheSafeParams: CacheSafeParams | undefined;
  readonly signal: AbortSignal;
}

export interface ContextStageResult {
  readonly messages: readonly Message[];
  /** Boundary markers to yield to the consumer (snip, microcompact, compact_boundary). */
  readonly boundaries: readonly SystemMessage[];
  /** Tokens freed by this stage (fed into the auto-compact threshold check, R-C1). */
  readonly tokensFreed: number;
  readonly tracking: AutoCompactTracking;
}

/**
 * Context management before every API call (§4). The loop calls the stages in the documented
 * order R-C0 → R-C1 → R-C2 → R-C3 → R-C4/R-C5; R-C6 runs only on a withheld prompt-too-long.
 * The compaction package implements this; `passthroughContextPipeline` changes nothing.
 * Implementations must not throw for expected failures (a failed compaction is reported through
 * `tracking.consecutiveFailures`).
 */
export interface ContextPipeline {
  /** R-C0 + R-C1: cap tool results to their tool's limit, then snip old messages. */
  budgetAndSnip(input: ContextStageInput): ContextStageResult;
  /** R-C2: clear old tool results by tool_use_id (never thinking blocks). */
  microcompact(input: ContextStageInput): Promise<ContextStageResult>;
  /** R-C3: collapse long spans into summaries. */
  collapse(input: ContextStageInput): Promise<ContextStageResult>;
  /** R-C4/R-C5: compact the whole history when over threshold (or from session memory). */
  autocompact(input: ContextStageInput): Promise<ContextStageResult>;
  /** R-C3 on overflow: drain staged collapses; null when there is nothing to drain. */
  drainCollapse(input: ContextStageInput): Promise<ContextStageResult | null>;
  /** R-C6: compact once after a withheld prompt-too-long or media error; null when it could not. */
  reactiveCompact(input: ContextStageInput): Promise<ContextStageResult | null>;
  /**
   * R-C8: the token count of `messages` as this pipeline knows it. Optional: without it the loop
   * uses `tokenCountWithEstimation`, which trusts the last response's usage and so over-counts a
   * history a stage has just shrunk. The loop's R-C7 hard-limit check uses this when present.
   */
  tokenCount?(messages: readonly Message[]): number;
}

function unchanged(input: ContextStageInput): ContextStageResult {
  return { messages: input.messages, boundaries: [], tokensFreed: 0, tracking: input.tracking };
}

export const passthroughContextPipeline: ContextPipeline = {
  budgetAndSnip: unchanged,
  microcompact: async (input) => unchanged(input),
  collapse: async (input) => unchanged(input),
  autocompact: async (input) => unchanged(input),
  drainCollapse: async () => null,
  reactiveCompact: async () => null,
};
