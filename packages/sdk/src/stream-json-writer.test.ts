import {
  createAssistantMessage,
  createSystemMessage,
  createUserMessage,
  type Terminal,
} from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { streamJsonLineSchema } from "./stream-json.js";
import { StreamJsonWriter } from "./stream-json-writer.js";

const usage = {
  input_tokens: 100,
  output_tokens: 20,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 1_000,
  cache_creation: null,
  server_tool_use: null,
  service_tier: null,
} as never;

function reply(content: unknown[], stop: "end_turn" | "tool_use") {
  return createAssistantMessage({
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-6",
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage,
  } as never);
}

describe("stream-json writer (Claude Code–compatible headless lines)", () => {
  it("R-X1: the lines of one message printed a block per line have their own uuids, the last the message's", () => {
    const writer = new StreamJsonWriter({ sessionId: "s1" });
    const message = reply(
      [
        { type: "text", text: "Reading both." },
        { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/w/a.ts" } },
        { type: "tool_use", id: "toolu_2", name: "Read", input: { file_path: "/w/b.ts" } },
      ],
      "tool_use",
    );
    const results = createUserMessage([
      { type: "tool_result", tool_use_id: "toolu_1", content: "a" },
      { type: "tool_result", tool_use_id: "toolu_2", content: "b" },
    ]);
    for (const [event, count] of [
      [message, 3],
      [results, 2],
    ] as const) {
      const uuids = writer.lines(event).map((line) => (line as { uuid: string }).uuid);
      expect(uuids).toHaveLength(count);
      expect(new Set(uuids).size).toBe(count);
      expect(uuids.at(-1)).toBe(event.uuid);
    }
  });

  it("every line validates; one assistant line per content block; result carries usage, cost, turns", () => {
    let clock = 0;
    const writer = new StreamJsonWriter({ sessionId: "s1", now: () => clock });
    const lines = [
      writer.init({
        cwd: "/w",
        tools: ["Read"],
        model: "claude-sonnet-4-6",
        permissionMode: "default",
        simulated: true,
      }),
      ...writer.lines({
        type: "request_start",
        model: "claude-sonnet-4-6",
        querySource: "sdk",
        prefix: {
          model: "claude-sonnet-4-6",
          systemPrompt: [],
          tools: [],
          maxOutputTokens: 8_000,
          forkContextMessages: [],
        },
      }),
    ];
    clock = 40;
    lines.push(
      ...writer.lines(
        reply(
          [
            { type: "text", text: "Reading." },
            { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/w/a.ts" } },
          ],
          "tool_use",
        ),
      ),
      ...writer.lines(createUserMessage([{ type: "tool_result", tool_use_id: "toolu_1", content: "1\tx" }])),
      ...writer.lines({
        type: "api_retry",
        attempt: 1,
        maxRetries: 2,
        delayMs: 500,
        error: "429 rate_limit_error",
        status: 429,
      }),
      ...writer.lines(reply([{ type: "text", text: "It exports x." }], "end_turn")),
    );
    const terminal: Terminal = {
      reason: "completed",
      turnCount: 2,
      messages: [],
      usage: {
        inputTokens: 200,
        outputTokens: 40,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 2_000,
        apiCalls: 2,
      },
    };
    lines.push(writer.result(terminal, { durationMs: 90, permissionDenials: [] }));
    for (const line of lines)
      expect(streamJsonLineSchema.safeParse(JSON.parse(JSON.stringify(line))).success).toBe(true);
    expect(lines.map((line) => ("subtype" in line ? `${line.type}/${line.subtype}` : line.type))).toEqual([
      "system/init",
      "assistant",
      "assistant",
      "user",
      "system/api_retry",
      "assistant",
      "result/success",
    ]);
    const result = lines.at(-1);
    expect(result).toMatchObject({
      num_turns: 2,
      result: "It exports x.",
      duration_api_ms: 40,
      usage: { cache_read_input_tokens: 2_000 },
      terminal_reason: "completed",
    });
    // 2 × (100 × $3 + 1000 × $0.3 + 20 × $15) per million tokens
    expect((result as { total_cost_usd: number }).total_cost_usd).toBeCloseTo(
      (2 * (300 + 300 + 300)) / 1e6,
      10,
    );
  });

  it("a max_turns terminal is error_max_turns with is_error", () => {
    const writer = new StreamJsonWriter({ sessionId: "s1" });
    const line = writer.result(
      {
        reason: "max_turns",
        turnCount: 1,
        messages: [],
        usage: {
          inputTokens: 0,
          outputTokens: 0,
          cacheCreationInputTokens: 0,
          cacheReadInputTokens: 0,
          apiCalls: 1,
        },
      },
      { durationMs: 1, permissionDenials: [] },
    );
    expect(line).toMatchObject({ subtype: "error_max_turns", is_error: true });
  });

  it("compaction boundaries, fallbacks and tombstones become system lines; other markers print nothing", () => {
    const writer = new StreamJsonWriter({ sessionId: "s1" });
    const boundary = {
      ...createSystemMessage("Conversation compacted", "compact_boundary"),
      compactMetadata: { trigger: "auto" as const, preTokens: 150_000, postTokens: 9_000 },
    };
    const lines = [
      ...writer.lines(boundary),
      ...writer.lines(createSystemMessage("snipped", "snip_boundary")),
      ...writer.lines({ type: "model_fallback", from: "claude-opus-4-6", to: "claude-sonnet-4-6" }),
      ...writer.lines({ type: "tombstone", uuid: "u-1" }),
      ...writer.lines({ type: "tool_use_summary", summary: "read a file", precedingToolUseIds: [] }),
    ];
    for (const line of lines) expect(streamJsonLineSchema.safeParse(line).success).toBe(true);
    expect(lines).toMatchObject([
      {
        subtype: "compact_boundary",
        compact_metadata: { trigger: "auto", pre_tokens: 150_000, post_tokens: 9_000 },
      },
      { subtype: "model_fallback", from: "claude-opus-4-6", to: "claude-sonnet-4-6" },
      { subtype: "tombstone", removed_uuid: "u-1" },
    ]);
  });

  it("a reactive compaction prints as Claude Code's `auto` trigger (Claude Code has manual and auto only)", () => {
    const writer = new StreamJsonWriter({ sessionId: "s" });
    const reactive = {
      ...createSystemMessage("compacted", "compact_boundary"),
      compactMetadata: { trigger: "reactive" as const, preTokens: 210_000, postTokens: 12_000 },
    };
    expect(writer.lines(reactive)).toMatchObject([
      { subtype: "compact_boundary", compact_metadata: { trigger: "auto", pre_tokens: 210_000 } },
    ]);
  });

  it("R-K2: each result numbers itself and carries the model usage since the previous one; only error results carry errors", () => {
    const writer = new StreamJsonWriter({ sessionId: "s1" });
    const terminal = (reason: "completed" | "max_turns"): Terminal => ({
      reason,
      turnCount: 1,
      messages: [],
      usage: {
        inputTokens: 100,
        outputTokens: 20,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 1_000,
        apiCalls: 1,
      },
    });
    writer.lines(reply([{ type: "text", text: "One." }], "end_turn"));
    const first = writer.result(terminal("completed"), { durationMs: 1, permissionDenials: [] });
    writer.lines(reply([{ type: "text", text: "Two." }], "end_turn"));
    const second = writer.result(terminal("max_turns"), {
      durationMs: 1,
      permissionDenials: [],
      maxTurns: 1,
    });
    for (const line of [first, second]) expect(streamJsonLineSchema.safeParse(line).success).toBe(true);
    expect(first).not.toHaveProperty("errors");
    expect(second).toMatchObject({
      subtype: "error_max_turns",
      errors: ["Reached maximum number of turns (1)"],
    });
    expect([first.result_index, second.result_index]).toEqual([0, 1]);
    const model = "claude-sonnet-4-6";
    expect(second.modelUsage[model]).toMatchObject({
      inputTokens: 200,
      canonicalModel: model,
      provider: "firstParty",
    });
    expect(second.model_usage_since_last_result[model]).toMatchObject({ inputTokens: 100, outputTokens: 20 });
    expect(second.usage).toMatchObject({ output_tokens_details: { thinking_tokens: 0 }, speed: "standard" });
  });

  it("R-K2: a stopped turn's error result is the Agent SDK's — its diagnostic names the last message, num_turns counts the turn's user messages; a loop-written message is isSynthetic", () => {
    const writer = new StreamJsonWriter({ sessionId: "s1" });
    writer.lines(reply([{ type: "tool_use", id: "toolu_1", name: "Bash", input: {} }], "tool_use"));
    writer.lines(
      createUserMessage([
        { type: "tool_result", tool_use_id: "toolu_1", content: "Interrupted by user" },
      ] as never),
    );
    writer.lines(createUserMessage("[Request interrupted by user for tool use]"));
    const stopped = writer.result(
      {
        reason: "aborted_tools",
        turnCount: 1,
        messages: [],
        usage: {
          inputTokens: 0,
          outputTokens: 0,
          cacheCreationInputTokens: 0,
          cacheReadInputTokens: 0,
          apiCalls: 1,
        },
      },
      { durationMs: 1, permissionDenials: [] },
    );
    expect(stopped).toMatchObject({
      subtype: "error_during_execution",
      terminal_reason: "aborted_tools",
      // The prompt, the tool result and the notice.
      num_turns: 3,
      errors: ["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"],
    });
    const [resume] = writer.lines(createUserMessage("Output token limit hit.", { isMeta: true }));
    expect(resume).toMatchObject({ type: "user", isSynthetic: true });
    const [prompt] = writer.lines(createUserMessage("hello"));
    expect(prompt).not.toHaveProperty("isSynthetic");
  });

  it("R-K2: an assistant line's message carries the API message's context_management, null when the API sent none, as Claude Code's lines do", () => {
    const writer = new StreamJsonWriter({ sessionId: "s1" });
    const [line] = writer.lines(reply([{ type: "text", text: "Hi." }], "end_turn"));
    expect(line).toMatchObject({ type: "assistant", message: { context_management: null } });
    const edited = reply([{ type: "text", text: "Hi." }], "end_turn");
    const applied = { applied_edits: [{ type: "clear_tool_uses_20250919", cleared_tool_uses: 2 }] };
    (edited.message as { context_management?: unknown }).context_management = applied;
    const [kept] = writer.lines(edited);
    expect(kept).toMatchObject({ message: { context_management: applied } });
  });
});
