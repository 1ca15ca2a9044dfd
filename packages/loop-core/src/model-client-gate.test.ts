import { describe, expect, it } from "vitest";
import type { LoopEvent } from "./loop-events.js";
import { query } from "./query.js";
import { FAST_RETRY, simParams, useSimulator } from "./test-support/sim-harness.js";
import { collect, testContext } from "./testing/index.js";

const sims = useSimulator();

const retries = (events: readonly LoopEvent[]) =>
  events.flatMap((event) => (event.type === "api_retry" ? [event] : []));

/** Loose enough for a loaded machine; every wait below is longer. */
const HEADERS_DEADLINE_MS = 1_000;

describe("R-B1: the pre-send gate (beforeSend) runs before the headers deadline starts", () => {
  it("a gate that waits longer than headersTimeoutMs: the request is sent once, after the gate, and no retry is counted", async () => {
    const handle = await sims.start([{ content: [{ type: "text", text: "answered" }] }]);
    let openedAt = 0;
    const { events, terminal } = await collect(
      query(
        simParams(handle, {
          retry: { ...FAST_RETRY, headersTimeoutMs: HEADERS_DEADLINE_MS },
          beforeSend: async () => {
            await new Promise((resolve) => setTimeout(resolve, 2.5 * HEADERS_DEADLINE_MS));
            openedAt = Date.now();
          },
        }),
      ),
    );
    expect(terminal.reason).toBe("completed");
    expect(retries(events)).toEqual([]);
    const sent = handle.messageRequests();
    expect(sent).toHaveLength(1);
    expect(sent[0]?.startedAt).toBeGreaterThanOrEqual(openedAt);
  });

  it("each attempt passes the gate: a retried request waits on it again", async () => {
    const handle = await sims.start([{ content: [{ type: "text", text: "answered" }] }], {
      faults: { schedule: [{ kind: "529", from: 1, to: 1 }] },
    });
    let passes = 0;
    const { terminal } = await collect(
      query(
        simParams(handle, {
          retry: FAST_RETRY,
          beforeSend: async () => {
            passes++;
          },
        }),
      ),
    );
    expect(terminal.reason).toBe("completed");
    expect(handle.messageRequests()).toHaveLength(2);
    expect(passes).toBe(2);
  });

  it("a gate that throws fails the attempt before anything is sent; it is retried and the error named", async () => {
    const handle = await sims.start([{ content: [{ type: "text", text: "answered" }] }]);
    let passes = 0;
    const { events, terminal } = await collect(
      query(
        simParams(handle, {
          retry: FAST_RETRY,
          beforeSend: async () => {
            if (passes++ === 0) throw new Error("the limiter is unreachable");
          },
        }),
      ),
    );
    expect(terminal.reason).toBe("completed");
    expect(retries(events).map((event) => event.error)).toEqual([
      "the request gate failed: the limiter is unreachable",
    ]);
    expect(handle.messageRequests()).toHaveLength(1);
  });

  it("an abort during the gate's wait ends the call at once: nothing is sent", async () => {
    const handle = await sims.start([{ content: [{ type: "text", text: "answered" }] }]);
    const context = testContext({ tools: [] });
    let gateSignal: AbortSignal | undefined;
    const { terminal } = await collect(
      query(
        simParams(handle, {
          toolUseContext: context,
          beforeSend: (signal) => {
            gateSignal = signal;
            setTimeout(() => context.abortController.abort(new Error("user pressed stop")), 50);
            // A limit that never frees up: only the abort can end this wait.
            return new Promise((resolve) =>
              signal.addEventListener("abort", () => resolve(), { once: true }),
            );
          },
        }),
      ),
    );
    expect(terminal.reason).toMatch(/^aborted/);
    expect(gateSignal?.aborted).toBe(true);
    expect(handle.messageRequests()).toHaveLength(0);
  });
});
