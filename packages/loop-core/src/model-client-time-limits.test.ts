import { parseFaultSpec } from "@forkloop/sim";
import { describe, expect, it } from "vitest";
import { loadAnthropicSdk } from "./anthropic-sdk.js";
import type { LoopEvent } from "./loop-events.js";
import { callModel, type RetryClock } from "./model-client.js";
import { classifyError } from "./model-failure.js";
import { query } from "./query.js";
import { simParams, useSimulator } from "./test-support/sim-harness.js";
import { collect } from "./testing/index.js";

// The SDK as forkloop loads it on first use (R-V2).
const Anthropic = await loadAnthropicSdk();

/** R-R11: time limits that tell the truth — an overall deadline per attempt, far resets waited out. */

const sims = useSimulator();

/** A clock whose sleeps return at once, moving its time on by what they slept. */
function simulatedClock(start = Date.UTC(2026, 0, 1, 12)): RetryClock & { slept: number[] } {
  let now = start;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    async sleep(ms, signal) {
      if (signal.aborted) return false;
      slept.push(ms);
      now += ms;
      return true;
    },
  };
}

const retries = (events: readonly LoopEvent[]) =>
  events.flatMap((event) => (event.type === "api_retry" ? [event] : []));

describe("R-R11: an overall deadline per model attempt", () => {
  it("R-R11: a server that drips one event well inside the idle timeout, for ever, still ends: the attempt's overall deadline aborts it and the retry answers", async () => {
    const handle = await sims.start([{ content: [{ type: "text", text: "done" }] }], {
      faults: parseFaultSpec("drip@1:slow_ms=20"),
    });
    const { events, terminal } = await collect(
      query(
        simParams(handle, {
          retry: { baseDelayMs: 1, maxDelayMs: 5, streamIdleTimeoutMs: 5_000, attemptTimeoutMs: 3_000 },
        }),
      ),
    );
    expect(terminal.reason).toBe("completed");
    const [retry] = retries(events);
    expect(retries(events)).toHaveLength(1);
    expect(retry?.error).toBe("the attempt did not finish within its overall deadline of 3000 ms");
    // The drip did stream before the deadline: the idle timer alone would never have fired.
    expect(handle.messageRequests().map((record) => record.fault)).toEqual(["drip", null]);
  });
});

describe("R-R11: a rate limit whose reset is far away is waited out, not failed", () => {
  it("R-R11: retry-after: 3600 on a simulated clock — one pause naming when the request resumes, no attempt spent, the reply arrives (0 failures)", async () => {
    const handle = await sims.start([{ content: [{ type: "text", text: "after the reset" }] }], {
      faults: parseFaultSpec("429@1:retry_after=3600"),
    });
    const clock = simulatedClock();
    const started = clock.now();
    const { events, terminal } = await collect(
      query(
        simParams(handle, {
          // The defaults: a backoff step is at most 32 s, so an hour is a far reset.
          retry: { maxRetries: 2 },
          deps: { callModel: (request) => callModel({ ...request, clock }) },
        }),
      ),
    );
    expect(terminal.reason).toBe("completed");
    const pauses = retries(events);
    expect(pauses).toHaveLength(1);
    expect(pauses[0]).toMatchObject({ delayMs: 3_600_000, resumesAt: started + 3_600_000, status: 429 });
    expect(clock.slept).toEqual([3_600_000]);
    expect(handle.messageRequests().map((record) => record.fault)).toEqual(["429", null]);
  });

  it("R-R11: a reset beyond the cap (--retry-max-wait) fails at once, naming the reset and the setting, without waiting", async () => {
    const handle = await sims.start([{ content: [{ type: "text", text: "never" }] }], {
      faults: parseFaultSpec("429@1:retry_after=3600"),
    });
    const clock = simulatedClock();
    const { events, terminal } = await collect(
      query(
        simParams(handle, {
          retry: { maxRetries: 2, maxRateLimitWaitMs: 60_000 },
          deps: { callModel: (request) => callModel({ ...request, clock }) },
        }),
      ),
    );
    expect(terminal.reason).toBe("model_error");
    expect(terminal.error?.message).toMatch(
      /rate limited until .*, beyond the 1m 0s this run waits for a reset \(--retry-max-wait/,
    );
    expect(retries(events)).toHaveLength(0);
    expect(clock.slept).toEqual([]);
  });

  it("R-R11: without retry-after, the anthropic-ratelimit reset headers say when (the latest of them)", () => {
    const headers = new Headers({
      "anthropic-ratelimit-requests-reset": "2026-01-01T13:00:00Z",
      "anthropic-ratelimit-tokens-reset": "2026-01-01T12:30:00Z",
    });
    const error = Anthropic.APIError.generate(
      429,
      { type: "error", error: { type: "rate_limit_error" } },
      "rate limited",
      headers,
    );
    const failure = classifyError(error);
    expect(failure.retryAfterMs).toBeUndefined();
    expect(failure.resetAtMs).toBe(Date.UTC(2026, 0, 1, 13));
  });

  it("R-R11: a limit with room left is not waited for — a 529 (overloaded) whose rate-limit headers have room retries with backoff", () => {
    const headers = new Headers({
      "anthropic-ratelimit-requests-remaining": "99999",
      "anthropic-ratelimit-requests-reset": "2026-01-01T13:00:00Z",
      "anthropic-ratelimit-tokens-remaining": "0",
      "anthropic-ratelimit-tokens-reset": "2026-01-01T12:30:00Z",
    });
    const overloaded = (h: Headers) =>
      classifyError(
        Anthropic.APIError.generate(
          529,
          { type: "error", error: { type: "overloaded_error" } },
          "overloaded",
          h,
        ),
      );
    expect(overloaded(headers).resetAtMs).toBe(Date.UTC(2026, 0, 1, 12, 30));
    headers.set("anthropic-ratelimit-tokens-remaining", "120000");
    expect(overloaded(headers).resetAtMs).toBeUndefined();
  });
});
