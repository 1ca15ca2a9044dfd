import { describe, expect, it } from "vitest";
import { toBrainRequest } from "../brain-request.js";
import type { MessagesRequest } from "../request-schema.js";
import { builtinPolicyBrain } from "./builtin-policy.js";

// R-D5: a fan-out prompt ends in a bounded number of requests when sub-agents run in the
// background and report with completion notices (Claude Code's <task-notification>).
const AGENT = {
  name: "Agent",
  description: "Launch a sub-agent",
  input_schema: {
    type: "object",
    properties: {
      description: { type: "string" },
      prompt: { type: "string" },
      subagent_type: { type: "string" },
    },
    required: ["description", "prompt", "subagent_type"],
  },
};
const READ = {
  name: "Read",
  description: "Read a file",
  input_schema: { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] },
};

function notice(id: string, summary: string): string {
  return `<task-notification>\n<task-id>${id}</task-id>\n<status>completed</status>\n<summary>Agent "${summary}" completed</summary>\n<result>src/a.ts: 3 lines.</result>\n</task-notification>`;
}

/** The built-in policy's reply to a conversation offering the Agent and Read tools. */
function replyTo(messages: MessagesRequest["messages"]) {
  const body = {
    model: "claude-opus-5-5",
    max_tokens: 1000,
    tools: [AGENT, READ],
    messages,
  } as MessagesRequest;
  return builtinPolicyBrain(toBrainRequest(body, null, 0));
}

const NOTICE_AFTER_HELLO: MessagesRequest["messages"] = [
  { role: "user", content: "hi" },
  { role: "assistant", content: [{ type: "text", text: "hello" }] },
  { role: "user", content: [{ type: "text", text: notice("t1", "Summarize src/a.ts") }] },
];

describe("R-D5: the built-in policy reads completion notices as a model would", () => {
  it("R-D5: a two-file fan-out with background sub-agents ends in a bounded number of requests, dispatching each file once", () => {
    const messages: MessagesRequest["messages"] = [
      { role: "user", content: "Summarize src/a.ts and src/b.ts" },
    ];
    const pending: string[] = [];
    let requests = 0;
    let dispatched = 0;
    while (requests < 20) {
      requests++;
      const reply = replyTo(messages);
      const calls = reply.content.flatMap((b, i) =>
        b.type === "tool_use" ? [{ ...b, id: `toolu_${requests}_${i}` }] : [],
      );
      messages.push({
        role: "assistant",
        content: reply.content.map((b, i) =>
          b.type === "tool_use" ? { ...b, id: `toolu_${requests}_${i}` } : b,
        ) as never,
      });
      if (calls.length > 0) {
        dispatched += calls.length;
        messages.push({
          role: "user",
          content: calls.map((call) => ({
            type: "tool_result" as const,
            tool_use_id: call.id,
            content: `Async agent launched successfully. agentId: ${call.id} (running in the background)`,
          })),
        });
        for (const call of calls) pending.push(notice(call.id, String(call.input.description)));
        continue;
      }
      const next = pending.shift();
      if (next === undefined) break;
      messages.push({ role: "user", content: [{ type: "text", text: next }] });
    }
    expect(dispatched).toBe(2);
    // The fan-out, its summary, then one acknowledgement per notice.
    expect(requests).toBe(4);
  });

  it("R-D5: a notice alone is acknowledged, never read as a task naming files", () => {
    const reply = replyTo(NOTICE_AFTER_HELLO);
    expect(reply.content.every((b) => b.type === "text")).toBe(true);
    expect(JSON.stringify(reply.content)).toContain("1 background task reported");
  });

  it("R-D5: a task followed only by a system message (Claude Code 2.1.332's environment block) is fresh, so it is started, not reported as already handled", () => {
    const reply = replyTo([
      { role: "user", content: "Summarize src/a.ts and src/b.ts" },
      { role: "system", content: [{ type: "text", text: "# Environment\nPlatform: linux" }] },
    ]);
    const calls = reply.content.filter((b) => b.type === "tool_use");
    expect(calls.map((c) => c.name)).toEqual(["Agent", "Agent"]);
    expect(JSON.stringify(reply.content)).not.toContain("already handled");
  });

  it("R-D5: a notice before a trailing system message is still a notice", () => {
    const reply = replyTo([
      ...NOTICE_AFTER_HELLO,
      { role: "system", content: [{ type: "text", text: "# Environment" }] },
    ]);
    expect(reply.content.every((b) => b.type === "text")).toBe(true);
    expect(JSON.stringify(reply.content)).toContain("1 background task reported");
  });
});
