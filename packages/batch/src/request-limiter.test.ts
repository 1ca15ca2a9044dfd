import { describe, expect, it } from "vitest";
import { admitRequest, limitedRequestGate, memoryRequestLimiter } from "./request-limiter.js";

describe("R-B1: the in-memory request limiter (a local batch's --rpm)", () => {
  it("admits N requests in a window, then names the wait until the oldest leaves it (the Redis script's rule)", async () => {
    let clock = 1_000_000;
    const limiter = memoryRequestLimiter(3, 60_000, () => clock);
    expect([await limiter.tryAdmit(), await limiter.tryAdmit()]).toEqual([0, 0]);
    clock += 10_000;
    expect(await limiter.tryAdmit()).toBe(0);
    expect(await limiter.tryAdmit()).toBe(50_000); // the first two leave at +60 s
    clock += 50_000;
    // A sliding window: the two oldest left, the third (admitted at +10 s) is still in it.
    expect([await limiter.tryAdmit(), await limiter.tryAdmit()]).toEqual([0, 0]);
    expect(await limiter.tryAdmit()).toBe(10_000);
  });

  it("a refused request is not counted: the limit is the admitted ones only", async () => {
    let clock = 0;
    const limiter = memoryRequestLimiter(1, 1_000, () => clock);
    expect(await limiter.tryAdmit()).toBe(0);
    for (let refused = 0; refused < 5; refused++) expect(await limiter.tryAdmit()).toBeGreaterThan(0);
    clock = 1_000;
    expect(await limiter.tryAdmit()).toBe(0);
  });

  it("admitRequest waits for the window to free up; an abort ends the wait and admits nothing", async () => {
    const limiter = memoryRequestLimiter(1, 200);
    await admitRequest(limiter, new AbortController().signal);
    const started = Date.now();
    await admitRequest(limiter, new AbortController().signal);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 20);
    await admitRequest(limiter, stop.signal);
    // The aborted wait took no slot: the next window admits the next request at once.
    await new Promise((resolve) => setTimeout(resolve, 220));
    expect(await limiter.tryAdmit()).toBe(0);
  });

  it("the gate reports a stretch of waiting once, however many requests wait in it", async () => {
    const limiter = memoryRequestLimiter(1, 300);
    const reported: number[] = [];
    const gate = limitedRequestGate(limiter, (waitMs) => reported.push(waitMs));
    const signal = new AbortController().signal;
    await Promise.all([gate(signal), gate(signal), gate(signal)]);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toBeGreaterThan(0);
  });
});
