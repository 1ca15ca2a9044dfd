import type { Usage } from "./messages.js";
import type { UsageTotals } from "./terminal.js";

/** The figures of a response's usage that totals count (a worker's usage event carries just these). */
type CountedUsage = Pick<
  Usage,
  "input_tokens" | "output_tokens" | "cache_creation_input_tokens" | "cache_read_input_tokens"
>;

/** Cumulative usage of one run: bookkeeping beside the immutable LoopState, not part of it. */
export class UsageCounter {
  private inputTokens = 0;
  private output = 0;
  private cacheCreationInputTokens = 0;
  private cacheReadInputTokens = 0;
  private calls = 0;

  add(usage: CountedUsage): void {
    this.inputTokens += usage.input_tokens;
    this.output += usage.output_tokens;
    this.cacheCreationInputTokens += usage.cache_creation_input_tokens ?? 0;
    this.cacheReadInputTokens += usage.cache_read_input_tokens ?? 0;
    this.calls += 1;
  }

  get apiCalls(): number {
    return this.calls;
  }

  get outputTokens(): number {
    return this.output;
  }

  totals(): UsageTotals {
    return {
      inputTokens: this.inputTokens,
      outputTokens: this.output,
      cacheCreationInputTokens: this.cacheCreationInputTokens,
      cacheReadInputTokens: this.cacheReadInputTokens,
      apiCalls: this.calls,
    };
  }
}

/** The one adder of usage: totals of totals (a run and its summaries, an agent and its forks). */
export function sumUsage(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    apiCalls: a.apiCalls + b.apiCalls,
  };
}

export const ZERO_USAGE_TOTALS: UsageTotals = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 0,
  apiCalls: 0,
});

/** API usage figures of some responses (compact requests, say) as totals, one API call each. */
export function usageTotalsOf(usages: readonly CountedUsage[]): UsageTotals {
  const counter = new UsageCounter();
  for (const usage of usages) counter.add(usage);
  return counter.totals();
}
