import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createUserMessage } from "./create-message.js";
import { query } from "./query.js";
import { FAST_RETRY, useSimulator } from "./test-support/sim-harness.js";
import { collect, testContext, testTool } from "./testing/index.js";

const sims = useSimulator();

describe("query against the simulator", () => {
  it("R-L6/R-L7: a tool turn then completed (next_turn, completed)", async () => {
    const { client, messageRequests } = await sims.start([
      {
        content: [
          { type: "text", text: "Reading." },
          { type: "tool_use", name: "Echo", input: { text: "hi" } },
        ],
      },
      { content: [{ type: "text", text: "All done." }] },
    ]);
    const echo = testTool({
      name: "Echo",
      schema: z.object({ text: z.string() }),
      call: async (input) => ({ content: `echo: ${String(input.text)}` }),
    });
    const { events, terminal } = await collect(
      query({
        messages: [createUserMessage("say hi")],
        systemPrompt: "You are a test.",
        toolUseContext: testContext({ tools: [echo] }),
        querySource: "sdk",
        client,
        retry: FAST_RETRY,
        recordSnapshots: true,
      }),
    );
    expect(terminal.reason).toBe("completed");
    expect(terminal.turnCount).toBe(2);
    expect(terminal.usage.apiCalls).toBe(2);
    const snapshots = events.filter((event) => event.type === "state_snapshot");
    expect(snapshots.map((snapshot) => snapshot.transition)).toEqual([undefined, "next_turn"]);
    const requests = messageRequests();
    expect(requests).toHaveLength(2);
    expect(requests.every((request) => request.error === null)).toBe(true);
    expect(requests[0]?.querySource).toBe("sdk");
    expect(JSON.stringify(terminal.messages)).toContain("echo: hi");
  });
});
