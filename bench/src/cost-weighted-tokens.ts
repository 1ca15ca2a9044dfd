/** The input-side usage counters of a response (the simulator's and the API's field names). */
export interface InputUsage {
  readonly input_tokens: number;
  readonly cache_creation_input_tokens: number;
  readonly cache_read_input_tokens: number;
  /** The 5m/1h split of the cache writes, when the response reports it. */
  readonly cache_creation?: { readonly ephemeral_1h_input_tokens?: number } | null;
}

/**
 * Input tokens weighted by their price relative to base input (api doc §5): uncached ×1, cache
 * write ×1.25 (5-minute TTL) or ×2 (1-hour TTL), cache read ×0.1 — the figure the cache
 * benchmarks compare.
 */
export function costWeightedInputTokens(usage: InputUsage): number {
  const write1h = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  const write5m = usage.cache_creation_input_tokens - write1h;
  return usage.input_tokens + write5m * 1.25 + write1h * 2 + usage.cache_read_input_tokens * 0.1;
}
