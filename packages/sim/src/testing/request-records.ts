import type { RequestRecord } from "../types.js";

/**
 * Cost-weighted tokens of every model request the simulator answered (uncached input ×1, cache
 * writes ×1.25, cache reads ×0.1, output ×1): what a run cost, to compare runs by (R-R13).
 */
export function weightedTokens(records: readonly RequestRecord[]): number {
  return records.reduce((sum, record) => {
    const usage = record.usage;
    if (!usage) return sum;
    return (
      sum +
      usage.input_tokens +
      1.25 * (usage.cache_creation_input_tokens ?? 0) +
      0.1 * (usage.cache_read_input_tokens ?? 0) +
      usage.output_tokens
    );
  }, 0);
}

/** The model requests of sub-agents (`x-forkloop-query-source: agent:…`). */
export function agentRequests(records: readonly RequestRecord[]): RequestRecord[] {
  return records.filter(
    (record) => record.path === "/v1/messages" && (record.querySource ?? "").startsWith("agent:"),
  );
}
