import type { BrainReply, BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SDKMessage } from "./messages.js";
import { query } from "./query.js";
import { collectMessages, startHarness } from "./test-support/sdk-harness.js";

// R-X3 forwardSubagentText (`claude --forward-subagent-text`): a sub-agent's text blocks (its
// final report too) as assistant messages with parent_tool_use_id; by default, as Claude Code,
// only its tool calls — over worker threads and the simulator.
const SAY = "SUB-SAYS-READING";
const REPORT = "SUB-REPORT-7";

function brain(request: BrainRequest): BrainReply {
  const sub = request.querySource?.startsWith("agent:") === true;
  const done = request.lastToolResults.length > 0;
  if (!sub) {
    return done
      ? { content: [{ type: "text", text: "done" }] }
      : {
          content: [
            {
              type: "tool_use",
              name: "Agent",
              input: {
                description: "read notes",
                prompt: "Read notes.md.",
                subagent_type: "general-purpose",
              },
            },
          ],
        };
  }
  return done
    ? { content: [{ type: "text", text: REPORT }] }
    : {
        content: [
          { type: "text", text: SAY },
          { type: "tool_use", name: "Read", input: { file_path: "notes.md" } },
        ],
      };
}

let harness: Awaited<ReturnType<typeof startHarness>>;
beforeAll(async () => {
  harness = await startHarness(brain);
});
afterAll(async () => harness?.close());

/** The text of the sub-agent's assistant messages, and whether its tool call was among them. */
function subAgentLines(messages: SDKMessage[]): { texts: string[]; toolCall: boolean } {
  const blocks = messages.flatMap((message) =>
    message.type === "assistant" && message.parent_tool_use_id !== null ? message.message.content : [],
  );
  return {
    texts: blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])),
    toolCall: blocks.some((block) => block.type === "tool_use" && block.name === "Read"),
  };
}

describe("R-X3: forwardSubagentText", () => {
  it("R-X3: by default a sub-agent's tool calls only; with forwardSubagentText its text and final report too", async () => {
    const plain = subAgentLines(await collectMessages(query({ prompt: "go", options: harness.options() })));
    expect(plain).toEqual({ texts: [], toolCall: true });
    const forwarded = subAgentLines(
      await collectMessages(query({ prompt: "go", options: harness.options({ forwardSubagentText: true }) })),
    );
    expect(forwarded).toEqual({ texts: [SAY, REPORT], toolCall: true });
  });

  it("R-X3, R-K2: with forwardSubagentText a sub-agent's text line comes before the task_progress announcing its tool call, and that before the call's line (Claude Code's order)", async () => {
    const messages = await collectMessages(
      query({ prompt: "go", options: harness.options({ forwardSubagentText: true }) }),
    );
    const order = messages.flatMap((message) => {
      if (message.type === "system" && message.subtype === "task_progress") return ["progress"];
      if (message.type !== "assistant" || message.parent_tool_use_id === null) return [];
      return message.message.content.flatMap((block) =>
        block.type === "text" && block.text === SAY
          ? ["text"]
          : block.type === "tool_use" && block.name === "Read"
            ? ["tool_use"]
            : [],
      );
    });
    expect(order).toEqual(["text", "progress", "tool_use"]);
  });
});
