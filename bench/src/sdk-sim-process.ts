/**
 * The simulator of `sdk.bench.ts`, in a process of its own so that neither side's figures carry
 * the model's CPU or memory (in one process with 32 `query()` sessions it competed with them for
 * the main thread). It reports each session's first request and each sub-agent it holds to the
 * bench over IPC, and holds every sub-agent's reply until the bench sends "release".
 */
import { type Brain, startSimulator } from "@forkloop/sim";

export type SimProcessMessage =
  | { readonly type: "listening"; readonly url: string }
  | { readonly type: "first_request"; readonly session: number; readonly at: number }
  | { readonly type: "sub_agent_waiting" }
  | { readonly type: "held"; readonly session: number };

const send = (message: SimProcessMessage) => process.send?.(message);

let release!: () => void;
const gate = new Promise<void>((resolve) => {
  release = resolve;
});
const seen = new Set<number>();
const held = new Set<number>();

const brain: Brain = async (request) => {
  if (request.querySource?.startsWith("agent:")) {
    send({ type: "sub_agent_waiting" });
    await gate;
    return { content: [{ type: "text", text: "sub-agent done" }] };
  }
  if (request.lastToolResults.length > 0) return { content: [{ type: "text", text: "both reported" }] };
  // "hold N: …": a session of the side-by-side memory round (the real Agent SDK's Claude Code
  // asks no sub-agent of ours), held at its first request, once per session, until the release.
  const hold = /\bhold (\d+):/.exec(request.lastUserText ?? "");
  if (hold) {
    const session = Number(hold[1]);
    if (!held.has(session)) {
      held.add(session);
      send({ type: "held", session });
    }
    await gate;
    return { content: [{ type: "text", text: "held and done" }] };
  }
  const session = Number(/session (\d+)/.exec(request.lastUserText ?? "")?.[1]);
  if (!seen.has(session)) {
    seen.add(session);
    // Epoch milliseconds: the same clock as the bench process's.
    send({ type: "first_request", session, at: performance.timeOrigin + performance.now() });
  }
  return {
    content: [
      { type: "tool_use", name: "Agent", input: { description: "part one", prompt: "Look at part one." } },
      { type: "tool_use", name: "Agent", input: { description: "part two", prompt: "Look at part two." } },
    ],
  };
};

const sim = await startSimulator({ brain, recordLimit: 100 });
process.on("message", (message) => {
  if (message === "release") release();
  if (message === "close") {
    release();
    void sim.close().then(() => process.exit(0));
  }
});
send({ type: "listening", url: sim.url });
