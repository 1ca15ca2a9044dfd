import type { AssistantMessage, Message, UserMessage } from "@forkloop/loop-core";
import type { TranscriptRecord } from "@forkloop/orchestrator";
import { describe, expect, it } from "vitest";
import { buildAgentView } from "./agent-view.js";
import { TextBudget } from "./message-view.js";

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();

function user(uuid: string, second: number, content: UserMessage["message"]["content"]): UserMessage {
  return { type: "user", uuid, parentUuid: null, timestamp: at(second), message: { role: "user", content } };
}

function reply(
  uuid: string,
  second: number,
  content: unknown[],
  usage = { input_tokens: 100, output_tokens: 10 },
) {
  return {
    type: "assistant",
    uuid,
    parentUuid: null,
    timestamp: at(second),
    message: { id: uuid, model: "claude-sonnet-4-6", content, usage },
  } as unknown as AssistantMessage;
}

const message = (value: Message): TranscriptRecord => ({ type: "message", message: value });
const start = (
  extra: Partial<Extract<TranscriptRecord, { type: "session_start" }>> = {},
): TranscriptRecord => ({
  type: "session_start",
  sessionId: "s1",
  agentId: "main",
  cwd: "/",
  model: "claude-sonnet-4-6",
  querySource: "sdk",
  createdAt: at(0),
  ...extra,
});
const budget = () => new TextBudget(1_000_000);

describe("an agent's view from its transcript records (R-V1)", () => {
  it("R-V1: an old transcript (no timing records) still gives one request per reply, the tool calls and totals", () => {
    const records = [
      start(),
      message(user("u1", 0, "go")),
      message(reply("a1", 2, [{ type: "tool_use", id: "t1", name: "Read", input: { file_path: "x" } }])),
      message(user("u2", 3, [{ type: "tool_result", tool_use_id: "t1", content: "nope", is_error: true }])),
      message(reply("a2", 5, [{ type: "text", text: "done" }], { input_tokens: 50, output_tokens: 5 })),
    ];
    const { view } = buildAgentView(records, { budget: budget() });
    expect(view.timed).toBe(false);
    expect(
      view.requests.map((request) => [request.startedAt, request.endedAt, request.tokens?.input]),
    ).toEqual([
      [null, Date.parse(at(2)), 100],
      [null, Date.parse(at(5)), 50],
    ]);
    expect(view.tools).toMatchObject([
      { id: "t1", request: 0, status: "error", startedAt: null, endedAt: Date.parse(at(3)) },
    ]);
    expect(view.turns).toBe(2);
    expect(view.tokens).toEqual({ input: 150, cacheWrite: 0, cacheRead: 0, output: 15 });
    expect(view.label).toBe("main agent");
    expect(view.limits?.autoCompact).toBeGreaterThan(0);
  });

  it("R-V1: request records give start, first token and cost; tool_started gives a tool's start; a boundary sits after the requests before it", () => {
    const records: TranscriptRecord[] = [
      start({ limits: { contextWindow: 10_000, autoCompact: 5_000, blockingLimit: 8_000 } }),
      message(user("u1", 0, "go")),
      { type: "tool_started", toolUseId: "t1", name: "Bash", at: at(3) },
      message(reply("a1", 2, [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } }])),
      {
        type: "request",
        model: "claude-sonnet-4-6",
        querySource: "sdk",
        startedAt: at(1),
        firstTokenAt: at(1.5),
        endedAt: at(2),
        outcome: "reply",
        messageUuid: "a1",
        retries: [{ at: at(1.2), attempt: 1, delayMs: 100, error: "529" }],
        costUsd: 0.5,
      },
      message(user("u2", 7, [{ type: "tool_result", tool_use_id: "t1", content: "ok" }])),
      message({
        type: "system",
        subtype: "compact_boundary",
        uuid: "b1",
        parentUuid: null,
        timestamp: at(8),
        content: "compacted",
        compactMetadata: { trigger: "auto", preTokens: 6_000, postTokens: 900 },
      }),
      // A local microcompact carries no pre/post figures: its own words say what it cleared.
      message({
        type: "system",
        subtype: "microcompact_boundary",
        uuid: "b2",
        parentUuid: null,
        timestamp: at(8),
        content: "Cleared 1 old tool results (~1966 tokens)",
      }),
      message(reply("a2", 9, [{ type: "text", text: "done" }])),
      {
        type: "request",
        model: "claude-sonnet-4-6",
        querySource: "sdk",
        startedAt: at(8),
        endedAt: at(9),
        outcome: "reply",
        messageUuid: "a2",
        retries: [],
      },
      {
        type: "terminal",
        reason: "completed",
        turnCount: 2,
        usage: {
          inputTokens: 200,
          outputTokens: 20,
          cacheCreationInputTokens: 0,
          cacheReadInputTokens: 0,
          apiCalls: 2,
        },
        costUsd: 0.75,
        endedAt: at(10),
      },
    ];
    const { view } = buildAgentView(records, { budget: budget() });
    expect(view.timed).toBe(true);
    expect(view.requests[0]).toMatchObject({
      startedAt: Date.parse(at(1)),
      firstTokenAt: Date.parse(at(1.5)),
      costUsd: 0.5,
      retries: [{ attempt: 1, error: "529" }],
    });
    expect(view.requests[1]?.firstTokenAt).toBeNull();
    expect(view.tools[0]).toMatchObject({
      startedAt: Date.parse(at(3)),
      endedAt: Date.parse(at(7)),
      status: "ok",
    });
    expect(view.markers).toEqual([
      {
        kind: "compact_boundary",
        at: Date.parse(at(8)),
        afterRequest: 1,
        trigger: "auto",
        preTokens: 6_000,
        postTokens: 900,
        detail: "compacted",
      },
      {
        kind: "microcompact_boundary",
        at: Date.parse(at(8)),
        afterRequest: 1,
        trigger: null,
        preTokens: null,
        postTokens: null,
        detail: "Cleared 1 old tool results (~1966 tokens)",
      },
    ]);
    expect(view.limits).toEqual({ contextWindow: 10_000, autoCompact: 5_000, blockingLimit: 8_000 });
    expect([view.turns, view.costUsd, view.status, view.endedAt]).toEqual([
      2,
      0.75,
      "completed",
      Date.parse(at(10)),
    ]);
  });

  it("R-V1: a fork's inherited history is counted, not shown; its first request's cache share is the parent's prefix", () => {
    const records = [
      start({
        agentId: "agent-1",
        querySource: "agent:general-purpose",
        parent: { sessionId: "s1", agentId: "main", toolUseId: "t9" },
      }),
      message(user("p1", 0, "parent prompt")),
      message(reply("p2", 1, [{ type: "tool_use", id: "t9", name: "Agent", input: {} }])),
      message(user("d1", 2, "Your task: scan")),
      { type: "transition", turnCount: 1, transition: undefined, messageCount: 3 } as TranscriptRecord,
      message(
        reply("a1", 3, [{ type: "text", text: "report" }], {
          input_tokens: 10,
          output_tokens: 5,
          cache_read_input_tokens: 90,
        } as never),
      ),
    ];
    const { view } = buildAgentView(records, { budget: budget(), parentId: "main", label: "Agent: scan" });
    expect(view.inheritedMessages).toBe(2);
    expect(view.messages.map((shown) => shown.uuid)).toEqual(["d1", "a1"]);
    expect(view.requests).toHaveLength(1);
    expect(view.firstRequestCacheShare).toBeCloseTo(0.9);
    expect([view.label, view.parentId]).toEqual(["Agent: scan", "main"]);
  });

  it("R-V1: message text past the budget is cut with a note; an SVG image is never embedded", () => {
    const records = [
      start(),
      message(
        user("u1", 0, [
          { type: "text", text: "x".repeat(50) },
          {
            type: "image",
            source: { type: "base64", media_type: "image/svg+xml", data: "PHN2Zz4=" },
          } as never,
        ]),
      ),
    ];
    const { view } = buildAgentView(records, { budget: new TextBudget(20) });
    expect(view.messagesCut).toBe(true);
    expect(view.messages[0]?.blocks).toEqual([
      { type: "text", text: `${"x".repeat(20)}… [30 more characters not in this report]` },
      { type: "image", mediaType: "image/svg+xml", data: null, bytes: 6 },
    ]);
  });
});
