// The simulator of test/chaos/hostile-model.test.ts, on a thread of its own so that it does not
// share one with the hundreds of sessions it answers (the built packages: no "source" condition).
// Its brain takes the faults `workerData.faults` lists, one per request in the order they come
// (null: no fault; past the end: none), posts the simulator's URL, and closes on a "close"
// message, answered with "closed". Started by `startHostileSim` (hostile-sim.ts).
import { parentPort, workerData } from "node:worker_threads";
import { startSimulator } from "@forkloop/sim";

// Read-only and concurrency-safe, so the attacks reach the streaming executor too.
const GLOB = { type: "tool_use", name: "Glob", input: { pattern: "*.md" } };

/**
 * With no fault, a Glob call until a tool result came back, then an answer; the tool faults
 * (duplicate ids, a deep input) turn a Glob call hostile; the others take an answer.
 */
function hostileBrain(faults) {
  let requests = 0;
  return (request) => {
    const fault = faults[requests++] ?? null;
    if (fault === null) {
      return request.lastToolResults.length > 0
        ? { content: [{ type: "text", text: "done (ok)" }] }
        : { content: [GLOB] };
    }
    if (fault.kind === "duplicate_ids" || fault.kind === "deep_input") return { content: [GLOB], fault };
    return { content: [{ type: "text", text: "done (hostile)" }], fault };
  };
}

/**
 * Rate limits are not under test here, and the simulator's default OTPM (20 M output tokens a
 * minute) is only 16 huge_block replies (5 MiB, about 1.3 M tokens each): on a fast machine the
 * sessions would get a 429 whose reset is up to a minute away, and the loop rightly waits it
 * out (R-R11) — past the test's hang bound.
 */
const NO_RATE_LIMITS = {
  requestsPerMinute: Number.MAX_SAFE_INTEGER,
  inputTokensPerMinute: Number.MAX_SAFE_INTEGER,
  outputTokensPerMinute: Number.MAX_SAFE_INTEGER,
};

if (parentPort && workerData?.hostileSim === true) {
  const sim = await startSimulator({ brain: hostileBrain(workerData.faults), rateLimits: NO_RATE_LIMITS });
  parentPort.on("message", async (message) => {
    if (message !== "close") return;
    await sim.close();
    parentPort.postMessage("closed");
  });
  parentPort.postMessage({ url: sim.url });
}
