/** Limits per API key over a sliding minute (the API's rate limits and their headers). */
export interface RateLimits {
  requestsPerMinute?: number;
  /** ITPM: `input_tokens` plus cache writes; cache reads do not count (api doc §4). */
  inputTokensPerMinute?: number;
  /** OTPM: output tokens of the responses in the window. */
  outputTokensPerMinute?: number;
}

/**
 * The simulator's own generous tier (not a real one): every response carries the rate-limit
 * headers, and the limits only bite when a run sets them lower (`rateLimits`,
 * `forkloop sim --rate-limits`). High enough for the capacity benchmark and long batch runs.
 */
export const DEFAULT_RATE_LIMITS: Readonly<Required<RateLimits>> = {
  requestsPerMinute: 100_000,
  inputTokensPerMinute: 100_000_000,
  outputTokensPerMinute: 20_000_000,
};

export type RateDecision =
  | { ok: true; headers: Record<string, string>; use: Use }
  | { ok: false; headers: Record<string, string>; retryAfterSeconds: number; message: string };

const WINDOW_MS = 60_000;

/** One admitted request; its output tokens are added when its reply is built. */
export interface Use {
  readonly at: number;
  readonly inputTokens: number;
  outputTokens: number;
  /** Left the window: its output no longer counts. */
  expired: boolean;
}

/** The requests of one key inside the window, oldest first, with running sums (O(1) per request). */
class KeyWindow {
  uses: Use[] = [];
  head = 0;
  input = 0;
  output = 0;

  get count(): number {
    return this.uses.length - this.head;
  }

  prune(now: number): void {
    while (this.head < this.uses.length) {
      const use = this.uses[this.head];
      if (use === undefined || use.at > now - WINDOW_MS) break;
      use.expired = true;
      this.input -= use.inputTokens;
      this.output -= use.outputTokens;
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.uses.length) {
      this.uses = this.uses.slice(this.head);
      this.head = 0;
    }
  }

  /** Milliseconds until the oldest uses have left the window far enough for `fits` to hold. */
  waitUntil(
    now: number,
    fits: (freedRequests: number, freedInput: number, freedOutput: number) => boolean,
  ): number {
    let input = 0;
    let output = 0;
    for (let i = this.head; i < this.uses.length; i++) {
      const use = this.uses[i] as Use;
      input += use.inputTokens;
      output += use.outputTokens;
      if (fits(i - this.head + 1, input, output)) return use.at + WINDOW_MS - now;
    }
    return WINDOW_MS;
  }

  oldest(now: number): number {
    return this.uses[this.head]?.at ?? now;
  }
}

/** A sliding-window limiter on the injected clock, per API key. */
export class RateLimiter {
  readonly #limits: Readonly<Required<RateLimits>>;
  readonly #clock: () => number;
  readonly #windows = new Map<string, KeyWindow>();

  constructor(limits: RateLimits, clock: () => number) {
    this.#limits = { ...DEFAULT_RATE_LIMITS, ...limits };
    this.#clock = clock;
  }

  /** Admits (and records) one request of `inputTokens` ITPM-counted tokens for `key`, or refuses it. */
  admit(key: string, inputTokens: number): RateDecision {
    const now = this.#clock();
    const window = this.#window(key, now);
    const { requestsPerMinute: rpm, inputTokensPerMinute: itpm, outputTokensPerMinute: otpm } = this.#limits;
    if (window.count + 1 > rpm) {
      const wait = window.waitUntil(now, (freed) => window.count - freed + 1 <= rpm);
      return this.#refuse(now, window, wait, "Number of requests has exceeded your per-minute rate limit");
    }
    if (window.input + inputTokens > itpm) {
      const wait = window.waitUntil(now, (_, freed) => window.input - freed + inputTokens <= itpm);
      return this.#refuse(
        now,
        window,
        wait,
        "Number of request input tokens has exceeded your per-minute rate limit",
      );
    }
    if (window.output >= otpm) {
      const wait = window.waitUntil(now, (_r, _i, freed) => window.output - freed < otpm);
      return this.#refuse(
        now,
        window,
        wait,
        "Number of output tokens has exceeded your per-minute rate limit",
      );
    }
    const use: Use = { at: now, inputTokens, outputTokens: 0, expired: false };
    window.uses.push(use);
    window.input += inputTokens;
    return { ok: true, headers: this.#headers(now, window), use };
  }

  /** Counts a reply's output tokens toward OTPM (while its request is still in the window). */
  recordOutput(key: string, use: Use, outputTokens: number): void {
    if (use.expired) return;
    use.outputTokens += outputTokens;
    const window = this.#windows.get(key);
    if (window) window.output += outputTokens;
  }

  /** The headers as they stand, for a response that was not admitted (a validation error). */
  peek(key: string): Record<string, string> {
    const now = this.#clock();
    return this.#headers(now, this.#window(key, now));
  }

  #window(key: string, now: number): KeyWindow {
    let window = this.#windows.get(key);
    if (window === undefined) {
      window = new KeyWindow();
      this.#windows.set(key, window);
    }
    window.prune(now);
    return window;
  }

  #refuse(now: number, window: KeyWindow, waitMs: number, message: string): RateDecision {
    const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
    const headers = this.#headers(now, window);
    headers["retry-after"] = String(retryAfterSeconds);
    return { ok: false, headers, retryAfterSeconds, message };
  }

  /**
   * `anthropic-ratelimit-{requests,input-tokens,output-tokens,tokens}-{limit,remaining,reset}`
   * (api doc §4): resets are RFC 3339, token counts rounded to thousands, `tokens-*` the more
   * restrictive of the input and output limits.
   */
  #headers(now: number, window: KeyWindow): Record<string, string> {
    const reset = new Date(window.oldest(now) + WINDOW_MS).toISOString();
    const { requestsPerMinute: rpm, inputTokensPerMinute: itpm, outputTokensPerMinute: otpm } = this.#limits;
    const inputLeft = Math.max(0, itpm - window.input);
    const outputLeft = Math.max(0, otpm - window.output);
    const thousands = (n: number) => String(Math.round(n / 1000) * 1000);
    const tighter = inputLeft / itpm <= outputLeft / otpm ? [itpm, inputLeft] : [otpm, outputLeft];
    return {
      "anthropic-ratelimit-requests-limit": String(rpm),
      "anthropic-ratelimit-requests-remaining": String(Math.max(0, rpm - window.count)),
      "anthropic-ratelimit-requests-reset": reset,
      "anthropic-ratelimit-input-tokens-limit": String(itpm),
      "anthropic-ratelimit-input-tokens-remaining": thousands(inputLeft),
      "anthropic-ratelimit-input-tokens-reset": reset,
      "anthropic-ratelimit-output-tokens-limit": String(otpm),
      "anthropic-ratelimit-output-tokens-remaining": thousands(outputLeft),
      "anthropic-ratelimit-output-tokens-reset": reset,
      "anthropic-ratelimit-tokens-limit": String(tighter[0]),
      "anthropic-ratelimit-tokens-remaining": thousands(tighter[1] ?? 0),
      "anthropic-ratelimit-tokens-reset": reset,
    };
  }
}

const SPEC_KEYS: Readonly<Record<string, keyof RateLimits>> = {
  rpm: "requestsPerMinute",
  itpm: "inputTokensPerMinute",
  otpm: "outputTokensPerMinute",
};

/**
 * `rpm=50,itpm=30000,otpm=8000` (`forkloop sim --rate-limits`): any subset; the others keep
 * their defaults. Expected failures are data: the message names the bad item and the fix.
 */
export function parseRateLimitSpec(
  spec: string,
): { ok: true; limits: RateLimits } | { ok: false; error: string } {
  const limits: RateLimits = {};
  for (const item of spec.split(",").map((s) => s.trim())) {
    const match = /^([a-z]+)=(\d+)$/.exec(item);
    const key = match ? SPEC_KEYS[match[1] ?? ""] : undefined;
    const value = Number(match?.[2]);
    if (!match || key === undefined || !Number.isSafeInteger(value) || value < 1) {
      return {
        ok: false,
        error: `"${item}" is not a limit: give rpm, itpm or otpm with a whole number of at least 1, e.g. rpm=50,itpm=30000,otpm=8000`,
      };
    }
    limits[key] = value;
  }
  return { ok: true, limits };
}
