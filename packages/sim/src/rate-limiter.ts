/** Limits per API key over a sliding minute (issue 2 point 6). */
export interface RateLimits {
  requestsPerMinute?: number;
  inputTokensPerMinute?: number;
}

export type RateDecision =
  | { ok: true; headers: Record<string, string> }
  | { ok: false; headers: Record<string, string>; retryAfterSeconds: number; message: string };

const WINDOW_MS = 60_000;

interface Use {
  at: number;
  inputTokens: number;
}

/**
 * A sliding-window limiter on the injected clock. Input tokens counted are `input_tokens` plus
 * cache writes; cache reads do not count toward ITPM (api doc §4).
 */
export class RateLimiter {
  readonly #limits: RateLimits;
  readonly #clock: () => number;
  readonly #uses = new Map<string, Use[]>();

  constructor(limits: RateLimits, clock: () => number) {
    this.#limits = limits;
    this.#clock = clock;
  }

  get active(): boolean {
    return this.#limits.requestsPerMinute !== undefined || this.#limits.inputTokensPerMinute !== undefined;
  }

  /** Admits (and records) one request of `inputTokens` ITPM-counted tokens for `key`, or refuses it. */
  admit(key: string, inputTokens: number): RateDecision {
    const now = this.#clock();
    const uses = (this.#uses.get(key) ?? []).filter((u) => u.at > now - WINDOW_MS);
    this.#uses.set(key, uses);
    const rpm = this.#limits.requestsPerMinute;
    const itpm = this.#limits.inputTokensPerMinute;
    const usedTokens = sumTokens(uses);

    if (rpm !== undefined && uses.length + 1 > rpm) {
      const wait = this.#waitUntilFree(uses, now, (list) => list.length + 1 <= rpm);
      return this.#refuse(
        now,
        uses,
        usedTokens,
        wait,
        "Number of requests has exceeded your per-minute rate limit",
      );
    }
    if (itpm !== undefined && usedTokens + inputTokens > itpm) {
      const wait = this.#waitUntilFree(uses, now, (list) => sumTokens(list) + inputTokens <= itpm);
      return this.#refuse(
        now,
        uses,
        usedTokens,
        wait,
        "Number of request input tokens has exceeded your per-minute rate limit",
      );
    }
    uses.push({ at: now, inputTokens });
    return { ok: true, headers: this.#headers(now, uses, usedTokens + inputTokens) };
  }

  #waitUntilFree(uses: Use[], now: number, fits: (remaining: Use[]) => boolean): number {
    for (let i = 0; i < uses.length; i++) {
      if (fits(uses.slice(i + 1))) return (uses[i]?.at ?? now) + WINDOW_MS - now;
    }
    return WINDOW_MS;
  }

  #refuse(now: number, uses: Use[], usedTokens: number, waitMs: number, message: string): RateDecision {
    const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
    const headers = this.#headers(now, uses, usedTokens);
    headers["retry-after"] = String(retryAfterSeconds);
    return { ok: false, headers, retryAfterSeconds, message };
  }

  /** `anthropic-ratelimit-*` headers; resets are RFC 3339, token counts rounded to thousands. */
  #headers(now: number, uses: Use[], usedTokens: number): Record<string, string> {
    const headers: Record<string, string> = {};
    const oldest = uses[0]?.at ?? now;
    const reset = new Date(oldest + WINDOW_MS).toISOString();
    const rpm = this.#limits.requestsPerMinute;
    if (rpm !== undefined) {
      headers["anthropic-ratelimit-requests-limit"] = String(rpm);
      headers["anthropic-ratelimit-requests-remaining"] = String(Math.max(0, rpm - uses.length));
      headers["anthropic-ratelimit-requests-reset"] = reset;
    }
    const itpm = this.#limits.inputTokensPerMinute;
    if (itpm !== undefined) {
      const remaining = String(Math.round(Math.max(0, itpm - usedTokens) / 1000) * 1000);
      for (const prefix of ["input-tokens", "tokens"]) {
        headers[`anthropic-ratelimit-${prefix}-limit`] = String(itpm);
        headers[`anthropic-ratelimit-${prefix}-remaining`] = remaining;
        headers[`anthropic-ratelimit-${prefix}-reset`] = reset;
      }
    }
    return headers;
  }
}

function sumTokens(uses: Use[]): number {
  return uses.reduce((sum, u) => sum + u.inputTokens, 0);
}
