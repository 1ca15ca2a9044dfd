import { describe, expect, it } from "vitest";
import { POST_TOOL_BATCH_CONTEXT_PREFIX } from "./post-tool-batch.js";
import { query } from "./query.js";
import { simParams, useSimulator } from "./test-support/sim-harness.js";
import { collect, testTool } from "./testing/index.js";

const sims = useSimulator();

describe("R-X1: a PostToolBatch hook's additionalContext reaches the model after the batch's results", () => {
  it("R-X1: the next request carries it in Claude Code's words after the tool results; the printed results stay the tools'", async () => {
    const handle = await sims.start((request) =>
      request.body.messages.length === 1
        ? {
            content: [
              { type: "tool_use", name: "Probe", input: { n: 1 } },
              { type: "tool_use", name: "Probe", input: { n: 2 } },
            ],
            stop_reason: "tool_use",
          }
        : { content: [{ type: "text", text: "Done." }] },
    );
    const { events, terminal } = await collect(
      query(
        simParams(handle, {
          tools: [testTool({ name: "Probe" })],
          hooks: {
            postToolBatch: [
              async ({ calls }) => ({ additionalContext: [`${calls.length} probes ran.`] }),
              async () => ({}),
              async () => ({ additionalContext: ["Codename ORANGE-KITE-4."] }),
            ],
          },
        }),
      ),
    );
    expect(terminal.reason).toBe("completed");
    const second = JSON.parse(handle.messageRequests()[1]?.rawBody ?? "{}") as {
      messages: { role: string; content: { type: string; text?: string }[] }[];
    };
    const results = second.messages.at(-1);
    expect(results?.role).toBe("user");
    expect(results?.content.map((block) => block.type)).toEqual([
      "tool_result",
      "tool_result",
      "text",
      "text",
    ]);
    expect(results?.content.slice(2).map((block) => block.text)).toEqual([
      `${POST_TOOL_BATCH_CONTEXT_PREFIX}2 probes ran.`,
      `${POST_TOOL_BATCH_CONTEXT_PREFIX}Codename ORANGE-KITE-4.`,
    ]);
    // As Claude Code prints none of it, the printed user messages hold only the tools' results.
    const printed = events.filter((event) => event.type === "user");
    expect(JSON.stringify(printed)).not.toContain("ORANGE-KITE-4");
  });
});
