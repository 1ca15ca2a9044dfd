import {
  createApiErrorMessage,
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
  it("R-K2: with partial messages each block's line comes just before its content_block_stop, the last one's uuid the message's", () => {
    const writer = new StreamJsonWriter({ sessionId: "s1", includePartialMessages: true });
    const message = {
      ...reply(
        [
          { type: "text", text: "Reading." },
          { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/w/a.ts" } },
        ],
        "tool_use",
      ),
      requestId: "req_1",
    };
    const start = {
      ...message.message,
      content: [],
      stop_reason: null,
      usage: { ...(usage as object), output_tokens: 1 },
    };
    const events = [
      { type: "message_start", message: start },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Reading." } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { ...message.message.content[1], input: {} } },
      {
        type: "content_block_delta",
        index: 1,
        delta: { type: "input_json_delta", partial_json: '{"file_path":"/w/a.ts"}' },
      },
      { type: "content_block_stop", index: 1 },
      { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage },
      { type: "message_stop" },
    ];
    const lines = [
      ...events.flatMap((event) =>
        writer.lines({ type: "stream_event", event, requestId: "req_1" } as never),
      ),
      ...writer.lines(message),
    ];
    const kinds = lines.map((line) =>
      line.type === "assistant"
        ? `assistant[${(line.message.content[0] as { type: string }).type}]`
        : (line as { event: { type: string } }).event.type,
    );
    expect(kinds).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "assistant[text]",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "assistant[tool_use]",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const assistants = lines.filter((line) => line.type === "assistant");
    // The last line is the transcript's message; each line as the block stood at its stop.
    expect(assistants.map((line) => line.uuid)).toEqual([
      expect.not.stringMatching(message.uuid),
      message.uuid,
    ]);
    expect(assistants.map((line) => [line.message.stop_reason, line.request_id])).toEqual([
      [null, "req_1"],
      [null, "req_1"],
    ]);
    expect(assistants[1]?.message.content).toEqual([message.message.content[1]]);
    for (const line of lines) expect(streamJsonLineSchema.safeParse(line).success).toBe(true);
  });

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

  it("R-K2: an MCP tool call's line carries tool_use_meta (title, server, own name); a built-in call's none", () => {
    const writer = new StreamJsonWriter({
      sessionId: "s1",
      toolOrigin: (name) =>
        name === "mcp__files__list_directory"
          ? { serverName: "secure-filesystem-server", toolName: "list_directory", title: "Listing" }
          : name === "mcp__weather__get_temperature"
            ? { serverName: "weather", toolName: "get_temperature" }
            : undefined,
    });
    const lines = writer.lines(
      reply(
        [
          { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/w/a.ts" } },
          { type: "tool_use", id: "toolu_2", name: "mcp__files__list_directory", input: { path: "/w" } },
          {
            type: "tool_use",
            id: "toolu_3",
            name: "mcp__weather__get_temperature",
            input: { city: "Lisbon" },
          },
        ],
        "tool_use",
      ),
    );
    for (const line of lines) expect(streamJsonLineSchema.safeParse(line).success).toBe(true);
    expect(lines.map((line) => (line as { tool_use_meta?: unknown }).tool_use_meta)).toEqual([
      undefined,
      [
        {
          id: "toolu_2",
          display_name: "Listing",
          server_display_name: "secure-filesystem-server",
          tool_name: "list_directory",
        },
      ],
      [
        {
          id: "toolu_3",
          display_name: "Get Temperature",
          server_display_name: "weather",
          tool_name: "get_temperature",
        },
      ],
    ]);
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

  it("R-X1: num_turns counts each parallel call's result as Claude Code does — two calls in one reply and the answer are 3 turns", () => {
    const writer = new StreamJsonWriter({ sessionId: "s1" });
    writer.lines(
      reply(
        [
          { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/w/a.ts" } },
          { type: "tool_use", id: "toolu_2", name: "Read", input: { file_path: "/w/b.ts" } },
        ],
        "tool_use",
      ),
    );
    // The loop hands each parallel call's result out as it ends, one message each.
    writer.lines(createUserMessage([{ type: "tool_result", tool_use_id: "toolu_2", content: "b" }]));
    writer.lines(createUserMessage([{ type: "tool_result", tool_use_id: "toolu_1", content: "a" }]));
    writer.lines(reply([{ type: "text", text: "a and b." }], "end_turn"));
    const terminal: Terminal = {
      reason: "completed",
      turnCount: 2,
      messages: [],
      usage: {
        inputTokens: 0,
        outputTokens: 0,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 0,
        apiCalls: 2,
      },
    };
    expect(writer.result(terminal, { durationMs: 1, permissionDenials: [] })).toMatchObject({ num_turns: 3 });
    // The count is the turn's own: the next turn's single call counts as one.
    writer.lines(
      reply([{ type: "tool_use", id: "toolu_3", name: "Read", input: { file_path: "/w/c.ts" } }], "tool_use"),
    );
    writer.lines(createUserMessage([{ type: "tool_result", tool_use_id: "toolu_3", content: "c" }]));
    writer.lines(reply([{ type: "text", text: "c." }], "end_turn"));
    expect(writer.result(terminal, { durationMs: 1, permissionDenials: [] })).toMatchObject({ num_turns: 2 });
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
  it("R-K2: a model the API does not serve (404) ends in Claude Code's words — model_not_found and its sentence naming the model, in the message and the result", () => {
    const writer = new StreamJsonWriter({ sessionId: "s1" });
    const error = { status: 404, type: "not_found_error", message: "model: claude-nope-9" };
    const [line] = writer.lines(createApiErrorMessage(error, "claude-nope-9"));
    const sentence =
      "There's an issue with the selected model (claude-nope-9). It may not exist or you may not have access to it. Run --model to pick a different model.";
    expect(streamJsonLineSchema.safeParse(line).success).toBe(true);
    expect(line).toMatchObject({
      error: "model_not_found",
      api_error_status: 404,
      api_error_type: "not_found_error",
      message: { content: [{ type: "text", text: sentence }] },
    });
    const usage = {
      inputTokens: 0,
      outputTokens: 0,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
      apiCalls: 1,
    };
    const ended: Terminal = { reason: "model_error", turnCount: 1, messages: [], usage, error };
    expect(writer.result(ended, { durationMs: 1, permissionDenials: [] })).toMatchObject({
      is_error: true,
      result: sentence,
      api_error_status: 404,
      terminal_reason: "api_error",
    });
  });
  it("R-K2: a turn that ended on an API error is the Agent SDK's success with is_error — the synthetic message's kind, status and type, the result's text, stop_reason and api_error terminal", () => {
    const writer = new StreamJsonWriter({ sessionId: "s1" });
    const error = { status: 400, type: "invalid_request_error", message: "Invalid request" };
    const failed = createApiErrorMessage(error, "claude-sonnet-4-6", { requestId: "req_1" });
    const [line] = writer.lines(failed);
    expect(streamJsonLineSchema.safeParse(line).success).toBe(true);
    expect(line).toMatchObject({
      type: "assistant",
      error: "unknown",
      request_id: "req_1",
      is_api_error_message: true,
      api_error_status: 400,
      api_error_type: "invalid_request_error",
      message: {
        model: "<synthetic>",
        stop_reason: "stop_sequence",
        stop_sequence: "",
        content: [{ type: "text", text: "API Error: 400 Invalid request" }],
      },
    });
    expect((line as { message: { content: object[] } }).message.content[0]).not.toHaveProperty("citations");
    const ended: Terminal = {
      reason: "model_error",
      turnCount: 1,
      messages: [],
      usage: {
        inputTokens: 0,
        outputTokens: 0,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 0,
        apiCalls: 1,
      },
      error,
    };
    const result = writer.result(ended, { durationMs: 1, permissionDenials: [] });
    expect(streamJsonLineSchema.safeParse(result).success).toBe(true);
    expect(result).toMatchObject({
      subtype: "success",
      is_error: true,
      result: "API Error: 400 Invalid request",
      stop_reason: "stop_sequence",
      api_error_status: 400,
      api_error_type: "invalid_request_error",
      terminal_reason: "api_error",
      num_turns: 1,
    });
    expect(result).not.toHaveProperty("errors");
    expect(result).not.toHaveProperty("ttft_ms");

    // A reply that stayed over the output cap: each resume prompt counts as a turn, as Claude Code's.
    for (let resume = 0; resume < 3; resume++) {
      writer.lines(reply([{ type: "text", text: "The essay" }], "end_turn"));
      writer.lines(createUserMessage("Output token limit hit.", { isMeta: true }));
    }
    const cut = {
      status: null,
      type: "max_output_tokens",
      message: "Claude's response exceeded the 8 output token maximum.",
    };
    const [notice] = writer.lines(createApiErrorMessage(cut, "claude-sonnet-4-6"));
    expect(notice).toMatchObject({
      error: "max_output_tokens",
      api_error: "max_output_tokens",
      api_error_params: { cut: "output_limit" },
    });
    expect(notice).not.toHaveProperty("api_error_status");
    writer.lines({ type: "request_start", model: "claude-sonnet-4-6", prefix: {} } as never);
    writer.lines({ type: "stream_event", event: { type: "message_start" } } as never);
    const over = writer.result({ ...ended, error: cut }, { durationMs: 1, permissionDenials: [] });
    expect(over).not.toHaveProperty("ttft_ms");
    expect(over).toMatchObject({
      subtype: "success",
      is_error: true,
      result: "API Error: Claude's response exceeded the 8 output token maximum.",
      api_error_status: null,
      api_error: "max_output_tokens",
      terminal_reason: "api_error",
      num_turns: 4,
    });

    // A model_error that did not end on an API error (a server pausing forever) stays an error result.
    writer.lines(reply([{ type: "text", text: "Paused." }], "end_turn"));
    const paused = writer.result(
      { ...ended, error: { type: "pause_turn_limit", message: "paused" } },
      { durationMs: 1, permissionDenials: [] },
    );
    expect(paused).toMatchObject({
      subtype: "error_during_execution",
      terminal_reason: "model_error",
      errors: ["paused"],
    });
  });
});
