import type { BrainReply, BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SDKMessage } from "./messages.js";
import type { HookInput } from "./options.js";
import { query } from "./query.js";
import { collectMessages, startHarness } from "./test-support/sdk-harness.js";

// R-K2, R-X1: a finished Agent call's tool_use_result and PostToolUse tool_response are Claude
// Code's object (status, agentId, toolsUsed, content, usage, toolStats, …), not the report text
// the model reads. Over the simulator: a custom agent in a worker reads and edits a real file.
const SUB_AGENT_CALLS = [
  { name: "Read", input: { file_path: "notes.md" } },
  {
    name: "Edit",
    input: { file_path: "notes.md", old_string: "version = 3;", new_string: "version = 4;\n// bumped" },
  },
];

function brain(request: BrainRequest): BrainReply | undefined {
  if (request.querySource === "sdk") {
    if (request.turnIndex > 0) return { content: [{ type: "text", text: "done" }] };
    const input = {
      description: "Bump the version",
      prompt: "Bump the version in notes.md.",
      subagent_type: "bumper",
    };
    return { content: [{ type: "tool_use", name: "Agent", input }] };
  }
  if (request.querySource !== "agent:bumper") return undefined;
  const call = SUB_AGENT_CALLS[request.turnIndex];
  if (call === undefined) return { content: [{ type: "text", text: "Bumped to 4." }] };
  return { content: [{ type: "tool_use", name: call.name, input: call.input }] };
}

let harness: Awaited<ReturnType<typeof startHarness>>;
beforeAll(async () => {
  harness = await startHarness(brain);
});
afterAll(async () => harness?.close());

describe("R-K2, R-X1: the Agent tool's structured output", () => {
  it("R-K2, R-X1: a finished Agent call's tool_use_result is Claude Code's object, the same PostToolUse gets; the model still reads the report", async () => {
    const responses: unknown[] = [];
    const messages: SDKMessage[] = await collectMessages(
      query({
        prompt: "bump it",
        options: harness.options({
          permissionMode: "bypassPermissions",
          allowDangerouslySkipPermissions: true,
          agents: {
            bumper: { description: "Bumps versions", prompt: "You bump versions.", tools: ["Read", "Edit"] },
          },
          hooks: {
            PostToolUse: [
              {
                matcher: "Agent",
                hooks: [
                  async (input: HookInput) => {
                    responses.push((input as { tool_response?: unknown }).tool_response);
                    return {};
                  },
                ],
              },
            ],
          },
        }),
      }),
    );
    const results = messages.flatMap((message) =>
      message.type === "user" && message.parent_tool_use_id === null && "tool_use_result" in message
        ? [message.tool_use_result]
        : [],
    );
    expect(results).toHaveLength(1);
    const output = results[0] as { usage: Record<string, number>; totalTokens: number };
    expect(output).toEqual({
      status: "completed",
      prompt: "Bump the version in notes.md.",
      agentId: expect.any(String),
      agentType: "bumper",
      toolsUsed: ["Read", "Edit"],
      content: [
        { type: "text", text: "<tools-used-before-summary>Read, Edit</tools-used-before-summary>\n" },
        { type: "text", text: "Bumped to 4." },
      ],
      resolvedModel: expect.any(String),
      totalDurationMs: expect.any(Number),
      totalTokens: expect.any(Number),
      totalToolUseCount: 2,
      usage: expect.objectContaining({
        input_tokens: expect.any(Number),
        output_tokens: expect.any(Number),
        service_tier: "standard",
        speed: "standard",
      }),
      // Claude Code's tally: the Edit wrote two lines for one.
      toolStats: {
        readCount: 1,
        searchCount: 0,
        bashCount: 0,
        editFileCount: 1,
        linesAdded: 2,
        linesRemoved: 1,
        otherToolCount: 0,
      },
      // Its transcript is saved: a SendMessage to it resumes it (R-T5).
      canContinueAgent: true,
    });
    // The last reply's tokens, all kinds.
    const usage = output.usage;
    expect(output.totalTokens).toBe(
      (usage.input_tokens ?? 0) +
        (usage.output_tokens ?? 0) +
        (usage.cache_creation_input_tokens ?? 0) +
        (usage.cache_read_input_tokens ?? 0),
    );
    expect(output.totalTokens).toBeGreaterThan(0);
    expect(responses).toEqual(results);
    // The model reads the report, not the object.
    const finalRequest = harness.sim
      .requests()
      .filter((record) => record.querySource === "sdk")
      .at(-1);
    expect(finalRequest?.rawBody).toContain("Bumped to 4.");
    // In Claude Code's hand-back frame (R-X1): the report is the sub-agent's words, not the user's.
    expect(finalRequest?.rawBody).toContain("[Subagent hand-back] The text below is the final report");
    expect(finalRequest?.rawBody).not.toContain("toolStats");
  });
});
