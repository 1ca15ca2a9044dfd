import { describe, expect, it } from "vitest";
import { RateLimiter } from "./rate-limiter.js";

describe("the sliding-minute rate limiter", () => {
  it("retry-after is the wait until enough of the window has passed", () => {
    let now = 0;
    const limiter = new RateLimiter({ requestsPerMinute: 2 }, () => now);
    expect(limiter.admit("k", 0).ok).toBe(true);
    now = 20_000;
    expect(limiter.admit("k", 0).ok).toBe(true);
    now = 30_000;
    const refused = limiter.admit("k", 0);
    expect(refused).toMatchObject({ ok: false, retryAfterSeconds: 30 });
    expect(refused.headers["retry-after"]).toBe("30");
    now = 60_001;
    expect(limiter.admit("k", 0).ok).toBe(true);
  });

  it("input tokens per minute: a request too big for the remaining budget waits; remaining rounds to thousands", () => {
    let now = 0;
    const limiter = new RateLimiter({ inputTokensPerMinute: 10_000 }, () => now);
    const first = limiter.admit("k", 6_400);
    expect(first.headers["anthropic-ratelimit-input-tokens-remaining"]).toBe("4000");
    expect(first.headers["anthropic-ratelimit-tokens-limit"]).toBe("10000");
    now = 10_000;
    expect(limiter.admit("k", 5_000)).toMatchObject({ ok: false, retryAfterSeconds: 50 });
    expect(limiter.admit("k", 3_000).ok).toBe(true);
    expect(limiter.admit("other", 9_000).ok).toBe(true);
  });

  it("output tokens per minute count the replies; every decision carries all twelve headers", () => {
    let now = 0;
    const limiter = new RateLimiter({ outputTokensPerMinute: 2_000 }, () => now);
    const first = limiter.admit("k", 100);
    if (!first.ok) throw new Error("admitted expected");
    limiter.recordOutput("k", first.use, 2_000);
    now = 15_000;
    const refused = limiter.admit("k", 100);
    expect(refused).toMatchObject({ ok: false, retryAfterSeconds: 45 });
    expect(refused.headers["anthropic-ratelimit-output-tokens-remaining"]).toBe("0");
    // The tighter of input and output is the `tokens-*` figure.
    expect(refused.headers["anthropic-ratelimit-tokens-limit"]).toBe("2000");
    now = 60_001;
    expect(limiter.admit("k", 100).ok).toBe(true);
    const names = Object.keys(limiter.peek("k")).sort();
    expect(names).toEqual(
      ["input-tokens", "output-tokens", "requests", "tokens"]
        .flatMap((kind) =>
          ["limit", "remaining", "reset"].map((part) => `anthropic-ratelimit-${kind}-${part}`),
        )
        .sort(),
    );
  });

  it("without configured limits the defaults apply: headers always, refusals only far above normal use", () => {
    const limiter = new RateLimiter({}, () => 0);
    for (let i = 0; i < 10_000; i++) expect(limiter.admit("k", 1_000).ok).toBe(true);
    expect(limiter.peek("k")["anthropic-ratelimit-requests-remaining"]).toBe("90000");
  });
});
