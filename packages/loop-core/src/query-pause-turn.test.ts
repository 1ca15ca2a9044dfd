import type { BrainReply } from "@forkloop/sim";
import { describe, expect, it } from "vitest";
import { MAX_PAUSE_TURN_CONTINUATIONS } from "./loop-state.js";
import { query } from "./query.js";
import { assertHistoryAccepted, simParams, useSimulator } from "./test-support/sim-harness.js";
import { collect } from "./testing/index.js";

const sims = useSimulator();

/** A server-tool loop the API paused mid-turn: the search ran server-side, the answer is to come. */
const PAUSED: BrainReply = {
  content: [
    { type: "text", text: "Searching." },
    { type: "server_tool_use", name: "web_search", input: { query: "forkloop" } },
  ],
  stop_reason: "pause_turn",
};
/** A 4.6+ model: the simulator answers a real prefill there with a 400. */
const MODEL = "claude-sonnet-4-6";

const lastMessage = (rawBody: string) =>
  (JSON.parse(rawBody) as { messages: { role: string; content: unknown }[] }).messages.at(-1);

describe("pause_turn: a paused server-tool turn is continued, not taken as finished", () => {
  it("the paused reply is sent back as-is, the continuation ends the turn, the stop hooks run once", async () => {
    const handle = await sims.start((request) =>
      request.body.messages.at(-1)?.role === "assistant"
        ? { content: [{ type: "text", text: "Found it." }] }
        : PAUSED,
    );
    let stopHookRuns = 0;
    const { events, terminal } = await collect(
      query(
        simParams(handle, {
          model: MODEL,
          recordSnapshots: true,
          hooks: {
            stop: [
              async () => {
                stopHookRuns++;
                return {};
              },
            ],
          },
        }),
      ),
    );
    expect(terminal.reason).toBe("completed");
    const requests = handle.messageRequests();
    expect(requests).toHaveLength(2);
    expect(requests.map((request) => request.error)).toEqual([null, null]);
    // The second request ends with the paused reply, block for block as the simulator sent it.
    const continued = lastMessage(requests[1]?.rawBody ?? "{}");
    expect(continued?.role).toBe("assistant");
    expect(JSON.stringify(continued?.content)).toContain('"type":"server_tool_use"');
    expect(JSON.stringify(continued?.content)).toContain('"query":"forkloop"');
    const snapshots = events.filter((event) => event.type === "state_snapshot");
    expect(snapshots.map((snapshot) => snapshot.transition)).toEqual([undefined, "pause_turn_continuation"]);
    expect(stopHookRuns).toBe(1);
    expect(JSON.stringify(terminal.messages.at(-1))).toContain("Found it.");
    await assertHistoryAccepted(handle, terminal.messages);
  });

  it("a server that pauses forever ends the run after MAX_PAUSE_TURN_CONTINUATIONS as model_error pause_turn_limit", async () => {
    const handle = await sims.start(() => PAUSED);
    const { terminal } = await collect(query(simParams(handle, { model: MODEL })));
    expect(terminal.reason).toBe("model_error");
    expect(terminal.error?.type).toBe("pause_turn_limit");
    expect(terminal.error?.message).toContain("pause_turn");
    const requests = handle.messageRequests();
    expect(requests).toHaveLength(MAX_PAUSE_TURN_CONTINUATIONS + 1);
    expect(requests.every((request) => request.error === null)).toBe(true);
    // The history it ends with (the last paused reply kept) goes on with a user turn.
    await assertHistoryAccepted(handle, terminal.messages);
  });

  it("R-L19: maxTurns counts each continuation as a model call", async () => {
    const handle = await sims.start(() => PAUSED);
    const { terminal } = await collect(query(simParams(handle, { model: MODEL, maxTurns: 3 })));
    expect(terminal.reason).toBe("max_turns");
    expect(handle.messageRequests()).toHaveLength(3);
  });
});
