import type { TokenCounts } from "../report-data.js";

export function count(value: number): string {
  if (Math.abs(value) >= 1_000_000) return `${(value / 1_000_000).toFixed(2)}M`;
  if (Math.abs(value) >= 10_000) return `${(value / 1_000).toFixed(1)}k`;
  return value.toLocaleString("en-US");
}

export function cost(usd: number): string {
  return `$${usd.toFixed(usd >= 1 ? 2 : 4)}`;
}

export function percent(share: number | null): string {
  return share === null ? "–" : `${(share * 100).toFixed(1)}%`;
}

export function duration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return "–";
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1_000)} s`;
}

export function clock(at: number | null): string {
  return at === null ? "–" : new Date(at).toISOString().replace("T", " ").slice(0, 19);
}

/** Input the model saw: uncached + written to the cache + read from it. */
export function promptTokens(tokens: TokenCounts): number {
  return tokens.input + tokens.cacheWrite + tokens.cacheRead;
}

/** The share of input read from the cache, as the CLI's report.json computes it. */
export function cacheReadShare(tokens: TokenCounts): number {
  const prompt = promptTokens(tokens);
  return prompt === 0 ? 0 : tokens.cacheRead / prompt;
}

export function addTokens(a: TokenCounts, b: TokenCounts): TokenCounts {
  return {
    input: a.input + b.input,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    cacheRead: a.cacheRead + b.cacheRead,
    output: a.output + b.output,
  };
}

export const NO_TOKENS: TokenCounts = { input: 0, cacheWrite: 0, cacheRead: 0, output: 0 };
