import { getEventListeners } from "node:events";
import type { Tool } from "@forkloop/loop-core";
import { type Brain, type Simulator, startSimulator } from "@forkloop/sim";
import { createBuiltinTools } from "@forkloop/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSession } from "./main-session.js";
import { runToEnd, type SessionRig, startSessionRig, testSessionOptions } from "./testing/index.js";

const PARALLEL_AGENTS = 12;
const FAN_OUT_TURNS = 3;

/** The turn's abort listeners, counted by a tool that runs alone on every other turn. */
const counted: number[] = [];
const probe: Tool = {
  name: "CountAbortListeners",
  description: "Counts the listeners on the turn's abort signal.",
  inputSchema: z.object({}).loose(),
  isConcurrencySafe: () => false,
  isReadOnly: () => true,
  maxResultSizeChars: 1_000,
  call: async (_input, context) => {
    counted.push(getEventListeners(context.abortController.signal, "abort").length);
    return { content: "counted" };
  },
};

// Turns alternate: the probe alone, then 12 Agent calls in one message, … and a final text.
const brain: Brain = (request) => {
  if (request.querySource !== "sdk") return { content: [{ type: "text", text: "done" }] };
  const turn = request.turnIndex;
  if (turn >= 2 * FAN_OUT_TURNS + 1) return { content: [{ type: "text", text: "All done." }] };
  if (turn % 2 === 0) return { content: [{ type: "tool_use", name: probe.name, input: {} }] };
  return {
    content: Array.from({ length: PARALLEL_AGENTS }, (_, index) => ({
      type: "tool_use" as const,
      name: "Agent",
      input: { description: `part ${index}`, prompt: `Do part ${index}.` },
    })),
  };
};

let sim: Simulator;
let rig: SessionRig<Simulator>;
beforeAll(async () => {
  rig = await startSessionRig(startSimulator({ brain }), "abort-listeners");
  sim = rig.sim;
});
afterAll(() => rig.close());

describe("R-T2: parallel calls share one abort listener on the turn's signal", () => {
  it(`R-T2, R-L16: ${PARALLEL_AGENTS} parallel Agent calls on one turn's signal raise no MaxListenersExceededWarning, and the signal's listeners stay where they were across turns`, async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === "MaxListenersExceededWarning") warnings.push(warning);
    };
    process.on("warning", onWarning);
    const abortController = new AbortController();
    try {
      const { pool, dir } = rig;
      const session = await createSession({
        ...testSessionOptions({ baseURL: sim.url, dir, pool }),
        tools: [...createBuiltinTools(), probe],
      });
      const terminal = await runToEnd(session.run("Split the work.", { signal: abortController.signal }));
      await session.close();
      expect(terminal.reason).toBe("completed");
      // A warning is emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(sim.requests().filter((record) => record.querySource === "agent:general-purpose")).toHaveLength(
      PARALLEL_AGENTS * FAN_OUT_TURNS,
    );
    expect(warnings.map((warning) => warning.message)).toEqual([]);
    // The turn's own listeners do not grow turn after turn: what the fan-outs added has gone.
    expect(counted).toHaveLength(FAN_OUT_TURNS + 1);
    expect(new Set(counted).size).toBe(1);
    // The caller's signal is let go when the run ends.
    expect(getEventListeners(abortController.signal, "abort")).toHaveLength(0);
  });
});
