import type { BrainReply, BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { SDKMessage } from "./messages.js";
import { query } from "./query.js";
import { createSdkMcpServer, tool } from "./sdk-mcp-server.js";
import { collectMessages, startHarness } from "./test-support/sdk-harness.js";

// R-M1, R-K2: an MCP tool's structured output as the Agent SDK gives it — the server's content
// blocks as tool_use_result; a result with structuredContent is that data as JSON, for the model
// and as `{content, structuredContent}`. Over the simulator, a createSdkMcpServer server.
const CALLS = ["mcp__calc__add", "mcp__calc__greet"];
const seenByModel: string[] = [];

function brain(request: BrainRequest): BrainReply | undefined {
  if (request.querySource !== "sdk") return undefined;
  for (const result of request.lastToolResults) seenByModel.push(result.content);
  const name = CALLS[request.turnIndex];
  if (name === undefined) return { content: [{ type: "text", text: "done" }] };
  return { content: [{ type: "tool_use", name, input: name.endsWith("add") ? { a: 2, b: 3 } : {} }] };
}

let harness: Awaited<ReturnType<typeof startHarness>>;
beforeAll(async () => {
  harness = await startHarness(brain);
});
afterAll(async () => harness?.close());

describe("R-M1, R-K2: MCP tool results", () => {
  it("R-M1, R-K2: tool_use_result is the server's content blocks, or {content, structuredContent} with the data as JSON for the model", async () => {
    const calc = createSdkMcpServer({
      name: "calc",
      tools: [
        tool("add", "Adds two numbers", { a: z.number(), b: z.number() }, async (args) => ({
          content: [{ type: "text", text: `The sum is ${args.a + args.b}.` }],
          structuredContent: { sum: args.a + args.b },
        })),
        tool("greet", "Says hello", {}, async () => ({ content: [{ type: "text", text: "hello" }] })),
      ],
    });
    const messages: SDKMessage[] = await collectMessages(
      query({
        prompt: "go",
        options: harness.options({ mcpServers: { calc }, allowedTools: ["mcp__calc"] }),
      }),
    );
    const results = messages.flatMap((message) =>
      message.type === "user" && "tool_use_result" in message ? [message.tool_use_result] : [],
    );
    expect(results).toEqual([
      { content: '{"sum":5}', structuredContent: { sum: 5 } },
      [{ type: "text", text: "hello" }],
    ]);
    expect(seenByModel).toEqual(['{"sum":5}', "hello"]);
  });
});
