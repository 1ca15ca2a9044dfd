import type { AssistantMessage, LoopEvent, ToolUseContext } from "@forkloop/loop-core";
import { getModelInfo } from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import type { TranscriptRecord } from "./transcript.js";
import { contextLimitsFor, TranscriptTiming } from "./transcript-timing.js";

function reply(uuid: string, apiError = false): AssistantMessage {
  return {
    type: "assistant",
    uuid,
    parentUuid: null,
    timestamp: new Date(0).toISOString(),
    message: {
      id: uuid,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-6",
      content: [{ type: "text", text: "hi", citations: null }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    } as unknown as AssistantMessage["message"],
    ...(apiError ? { apiError: { status: 500, type: "api_error", message: "boom" } } : {}),
  };
}

const delta = { type: "stream_event", event: { type: "content_block_delta" } } as unknown as LoopEvent;
const start = (model = "m1"): LoopEvent => ({
  type: "request_start",
  model,
  querySource: "sdk",
  prefix: { model, systemPrompt: [], tools: [], maxOutputTokens: 100, forkContextMessages: [] },
});

/** A recorder whose clock advances one second per reading. */
function recorder() {
  const records: TranscriptRecord[] = [];
  let tick = 0;
  const timing = new TranscriptTiming({
    append: (record) => records.push(record),
    costOf: () => 0.25,
    now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++)),
  });
  return { timing, records };
}

const second = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();

describe("transcript timing records (R-V1)", () => {
  it("R-V1: a request's start, first token, end, retries and cost; the first token of a retried stream is the new stream's", () => {
    const { timing, records } = recorder();
    timing.observe(start());
    timing.observe(delta); // 1: dropped by the retry
    timing.observe({
      type: "api_retry",
      attempt: 1,
      maxRetries: 3,
      delayMs: 500,
      error: "529 overloaded",
      status: 529,
    });
    timing.observe(delta); // 3
    timing.observe(delta); // not a reading: the first token is already stamped
    timing.observe(reply("a1")); // 4
    expect(records).toEqual([
      {
        type: "request",
        model: "m1",
        querySource: "sdk",
        startedAt: second(0),
        firstTokenAt: second(3),
        endedAt: second(4),
        outcome: "reply",
        messageUuid: "a1",
        retries: [{ at: second(2), attempt: 1, delayMs: 500, error: "529 overloaded" }],
        costUsd: 0.25,
      },
    ]);
  });

  it("R-V1: withheld, fallback, api_error and aborted requests are told apart", () => {
    const { timing, records } = recorder();
    timing.observe(start());
    timing.observe(start()); // the first one's reply was withheld
    timing.observe({ type: "model_fallback", from: "m1", to: "m2" });
    timing.observe(start("m2"));
    timing.observe(reply("e1", true));
    timing.observe(start("m2"));
    timing.finish();
    timing.finish(); // nothing open: no record
    const requests = records.filter((record) => record.type === "request");
    expect(requests.map((record) => [record.model, record.outcome])).toEqual([
      ["m1", "withheld"],
      ["m1", "fallback"],
      ["m2", "api_error"],
      ["m2", "aborted"],
    ]);
    expect(requests[1]).toMatchObject({ fallbackTo: "m2" });
    expect(requests[2]).toMatchObject({ messageUuid: "e1" });
    expect(requests[2]).not.toHaveProperty("costUsd");
  });

  it("R-V1: the PreToolUse stamp runs before the caller's hooks and has no opinion on the call", async () => {
    const { timing, records } = recorder();
    const order: string[] = [];
    const hooks = timing.withToolHook({
      preToolUse: [
        async () => {
          order.push("caller");
          return { decision: "deny" };
        },
      ],
    });
    const input = { toolName: "Read", toolInput: {}, toolUseId: "t1", context: {} as ToolUseContext };
    const outcomes = [];
    for (const hook of hooks.preToolUse ?? []) {
      outcomes.push(await hook(input));
      order.push(records.length === 1 ? "stamped" : "not stamped");
    }
    expect(outcomes[0]).toEqual({});
    expect(order).toEqual(["stamped", "caller", "stamped"]);
    expect(records).toEqual([{ type: "tool_started", toolUseId: "t1", name: "Read", at: second(0) }]);
  });

  it("R-C7: the context lines recorded for a model are its auto-compact and blocking thresholds", () => {
    const limits = contextLimitsFor({ ...getModelInfo("claude-sonnet-4-6"), contextWindow: 50_000 });
    expect(limits).toEqual({ contextWindow: 50_000, autoCompact: 17_000, blockingLimit: 27_000 });
  });
});
