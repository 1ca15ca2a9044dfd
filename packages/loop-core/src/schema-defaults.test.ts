import type { BrainReply } from "@forkloop/sim";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { query } from "./query.js";
import { simParams, useSimulator } from "./test-support/sim-harness.js";
import { collect, testTool } from "./testing/index.js";

const sims = useSimulator();

/** Edit's shape: one field with a schema default the model usually leaves out. */
const editLike = z.object({
  file_path: z.string(),
  old_string: z.string(),
  new_string: z.string(),
  replace_all: z.boolean().default(false),
});

const CALL = { file_path: "/tmp/a.txt", old_string: "teh", new_string: "the" };

function callThenDone(name: string): (request: { body: { messages: { role: string }[] } }) => BrainReply {
  return (request) =>
    request.body.messages.length === 1
      ? { content: [{ type: "tool_use", name, input: CALL }], stop_reason: "tool_use" }
      : { content: [{ type: "text", text: "Done." }] };
}

describe("R-X1: a tool call's input carries its schema's defaults, as Claude Code's does", () => {
  it("R-X1: Edit without replace_all is printed, run and sent back as {replace_all: false, …}", async () => {
    const handle = await sims.start(callThenDone("Edit"));
    const seen: Record<string, unknown>[] = [];
    const tool = testTool({
      name: "Edit",
      schema: editLike,
      call: async (input) => {
        seen.push(input);
        return { content: "edited" };
      },
    });
    const { events, terminal } = await collect(query(simParams(handle, { tools: [tool] })));
    expect(terminal.reason).toBe("completed");
    const call = events.flatMap((event) =>
      event.type === "assistant" ? event.message.content.filter((block) => block.type === "tool_use") : [],
    )[0];
    // Claude Code's order: the defaults first, then what the model wrote.
    expect(JSON.stringify(call?.input)).toBe(JSON.stringify({ replace_all: false, ...CALL }));
    expect(seen).toEqual([{ replace_all: false, ...CALL }]);
    const second = JSON.parse(handle.messageRequests()[1]?.rawBody ?? "{}") as {
      messages: { role: string; content: { type: string; input?: unknown }[] }[];
    };
    const sentBack = second.messages[1]?.content.find((block) => block.type === "tool_use");
    expect(sentBack?.input).toEqual({ replace_all: false, ...CALL });
  });

  it("R-X1: what the model set is kept, and an MCP tool's input is left to its server", async () => {
    const handle = await sims.start((request) =>
      request.body.messages.length === 1
        ? {
            content: [
              { type: "tool_use", name: "Edit", input: { ...CALL, replace_all: true } },
              { type: "tool_use", name: "mcp__notes__edit", input: CALL },
            ],
            stop_reason: "tool_use",
          }
        : { content: [{ type: "text", text: "Done." }] },
    );
    const tools = [
      testTool({ name: "Edit", schema: editLike }),
      testTool({ name: "mcp__notes__edit", schema: editLike }),
    ];
    const { events } = await collect(query(simParams(handle, { tools })));
    const inputs = events.flatMap((event) =>
      event.type === "assistant"
        ? event.message.content.flatMap((block) => (block.type === "tool_use" ? [block.input] : []))
        : [],
    );
    expect(inputs).toEqual([{ ...CALL, replace_all: true }, CALL]);
  });
});
