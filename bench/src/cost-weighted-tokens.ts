/** The input-side usage counters of a response (the simulator's and the API's field names). */
export interface InputUsage {
  readonly input_tokens: number;
  readonly cache_creation_input_tokens: number;
  readonly cache_read_input_tokens: number;
}

/**
 * Input tokens weighted by their price relative to base input (api doc §5): uncached ×1, cache
 * write ×1.25 (the 5-minute rate), cache read ×0.1 — the figure the cache benchmarks compare.
 */
export function costWeightedInputTokens(usage: InputUsage): number {
  return usage.input_tokens + usage.cache_creation_input_tokens * 1.25 + usage.cache_read_input_tokens * 0.1;
}
