import type { BrainReply, BrainRequest, RequestRecord } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { query } from "./query.js";
import { collectMessages, startHarness } from "./test-support/sdk-harness.js";

const FIRST = "ALSO-CHECK-THE-CHANGELOG-8";
const SECOND = "AND-THE-LICENSE-9";
const NESTED = "READ-THE-LICENSE-10";

const text = (value: string): BrainReply => ({ content: [{ type: "text", text: value }] });
const call = (name: string, input: Record<string, unknown>): BrainReply => ({
  content: [{ type: "tool_use", name, input }],
});

const withoutBreakpoints = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value, (key, field: unknown) => (key === "cache_control" ? undefined : field)));

/** The finished sub-agent's id, from its foreground result's line in Claude Code's words. */
let agentId = "";

function subAgent(request: BrainRequest): BrainReply {
  const body = JSON.stringify(request.body.messages);
  const last = JSON.stringify(request.body.messages.at(-1));
  if (last.includes(NESTED)) return text("nested: the license is MIT");
  const nested = request.lastToolResults.map((result) => result.content).join("\n");
  // The nested call's report, the first line inside Claude Code's hand-back frame.
  const report = /The report follows:\n {2}([^\n]*)/.exec(nested)?.[1];
  if (body.includes(SECOND) && report !== undefined)
    return text(`report three: the license too (${SECOND}); ${report}`);
  // The resumed sub-agent starts a nested one of its own, as it could in its first run.
  if (body.includes(SECOND))
    return call("Agent", { description: "check license", prompt: NESTED, subagent_type: "general-purpose" });
  if (body.includes(FIRST)) return text(`report two: the changelog too (${FIRST})`);
  return text("report one: notes only");
}

function parent(request: BrainRequest): BrainReply {
  const results = request.lastToolResults.map((result) => result.content).join("\n");
  const finished =
    /\nagentId: (agent-\w+) \(use SendMessage with to: '\1', summary: '<5-10 word recap>' to continue this agent\)\n/.exec(
      results,
    );
  if (finished?.[1] !== undefined) {
    agentId = finished[1];
    return call("SendMessage", { to: agentId, message: FIRST, summary: "check the changelog" });
  }
  if (results.length > 0) return text(results.includes("resumed") ? "it goes on" : "could not resume");
  const notice = request.lastUserText ?? "";
  if (notice.includes("<task-notification>") && notice.includes("report two"))
    return call("SendMessage", { to: agentId, message: SECOND, summary: "check the license" });
  if (notice.includes("<task-notification>")) return text("done");
  if (request.turnIndex > 0) return text("nothing more");
  return call("Agent", {
    description: "review notes",
    prompt: "Review notes.md.",
    subagent_type: "general-purpose",
  });
}

describe("R-T5: SendMessage resumes a finished sub-agent from its saved transcript, over worker threads and the simulator", () => {
  let harness: Awaited<ReturnType<typeof startHarness>>;
  beforeAll(async () => {
    harness = await startHarness((request) => {
      if (request.querySource?.startsWith("agent:")) return subAgent(request);
      if (request.querySource === "sdk") return parent(request);
      return undefined;
    });
  });
  afterAll(async () => {
    await harness.close();
  });

  const requests = (source: string): RequestRecord[] =>
    harness.sim
      .requests()
      .filter((record) => record.path === "/v1/messages" && record.querySource === source);

  it("R-T5: a message to a finished foreground sub-agent runs it again under its id with its own history and prefix; its new report is a task notification, and it can be resumed again, its nested Agent calls served", async () => {
    const messages = await collectMessages(
      query({
        prompt: "review the notes",
        options: harness.options({ allowedTools: ["Agent", "Read", "SendMessage"] }),
      }),
    );
    // Claude Code's structured output says the finished sub-agent can be continued.
    const output = messages.flatMap((message) =>
      message.type === "user" && message.parent_tool_use_id === null && "tool_use_result" in message
        ? [message.tool_use_result as { canContinueAgent?: boolean }]
        : [],
    );
    expect(output[0]?.canContinueAgent).toBe(true);

    const runs = requests("agent:general-purpose")
      // The nested sub-agent's own request (its task is its last message) is not the resumed one's.
      .filter((record) => !JSON.stringify(JSON.parse(record.rawBody).messages.at(-1)).includes(NESTED))
      .map(
        (record) =>
          JSON.parse(record.rawBody) as {
            system: unknown;
            tools: unknown;
            messages: { role: string; content: unknown }[];
          },
      );
    expect(runs).toHaveLength(4);
    const [first, second, third] = runs as [(typeof runs)[0], (typeof runs)[0], (typeof runs)[0]];
    // Each run goes on from the one before: its prefix (system, tools) unchanged, so the request
    // reads its own cache, and its history the earlier request's plus the reply and the message.
    for (const [before, after, message] of [
      [first, second, FIRST],
      [second, third, SECOND],
    ] as const) {
      expect(after.system).toEqual(before.system);
      expect(after.tools).toEqual(before.tools);
      // (The cache breakpoint moves on to the newest message; the content is the same.)
      expect(withoutBreakpoints(after.messages.slice(0, before.messages.length))).toEqual(
        withoutBreakpoints(before.messages),
      );
      expect(JSON.stringify(after.messages.at(-1))).toContain(message);
      expect(after.messages.at(-1)?.role).toBe("user");
    }
    expect(JSON.stringify(second.messages)).toContain("report one: notes only");
    expect(requests("agent:general-purpose")[1]?.usage?.cache_read_input_tokens ?? 0).toBeGreaterThan(0);

    // The parent heard of each resumed run's end, with its new report, under the same id.
    const notices = requests("sdk")
      .map((record) => record.rawBody)
      .filter((body) => body.includes("<task-notification>"));
    expect(notices.some((body) => body.includes(`report two: the changelog too (${FIRST})`))).toBe(true);
    expect(
      notices.some((body) =>
        body.includes(`report three: the license too (${SECOND}); nested: the license is MIT`),
      ),
    ).toBe(true);
    expect(notices.at(-1)).toContain(`<task-id>${agentId}</task-id>`);
    expect(messages.filter((message) => message.type === "result").at(-1)).toMatchObject({
      subtype: "success",
    });
  });

  it("R-T5: with the Agent SDK's persistSession: false (R-K1: transcripts kept only while the query runs, no warning), a finished sub-agent is still resumed by SendMessage", async () => {
    harness.sim.clearRequests();
    const warnings: string[] = [];
    const messages = await collectMessages(
      query({
        prompt: "review the notes",
        options: harness.options({
          allowedTools: ["Agent", "Read", "SendMessage"],
          persistSession: false,
          stderr: (line) => warnings.push(line),
        }),
      }),
    );
    expect(warnings.filter((line) => line.includes("ignoring options"))).toEqual([]);
    const notices = requests("sdk")
      .map((record) => record.rawBody)
      .filter((body) => body.includes("<task-notification>"));
    expect(notices.some((body) => body.includes(`report two: the changelog too (${FIRST})`))).toBe(true);
    expect(messages.filter((message) => message.type === "result").at(-1)).toMatchObject({
      subtype: "success",
    });
  });
});
