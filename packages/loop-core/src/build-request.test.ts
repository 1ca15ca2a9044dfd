import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toApiMessages } from "./api-messages.js";
import { buildRequest, toolDefinitions } from "./build-request.js";
import {
  createAssistantMessage,
  createSystemMessage,
  createUserMessage,
  syntheticApiMessage,
} from "./create-message.js";
import type { ContentBlock, Message } from "./messages.js";
import { query } from "./query.js";
import { simParams, useSimulator } from "./test-support/sim-harness.js";
import { collect, testTool } from "./testing/index.js";

const assistant = (content: ContentBlock[]) =>
  createAssistantMessage(syntheticApiMessage("m", content, "end_turn"));
const marks = (value: unknown) => JSON.stringify(value).split('"cache_control"').length - 1;

describe("toApiMessages", () => {
  it("drops system markers and API errors, merges same-role turns", () => {
    const history: Message[] = [
      createUserMessage("a"),
      createSystemMessage("boundary", "compact_boundary"),
      createUserMessage("b"),
      assistant([{ type: "text", text: "c", citations: null }]),
    ];
    expect(toApiMessages(history)).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "c" }] },
    ]);
  });

  it("R-L17: keeps thinking unmodified, never as the last block; drops it when thinking is off", () => {
    const thinking = { type: "thinking", thinking: "hmm", signature: "sig" } as ContentBlock;
    const history = [
      createUserMessage("q"),
      assistant([thinking, { type: "text", text: "a", citations: null }]),
      createUserMessage("q2"),
      assistant([thinking]),
    ];
    const withThinking = toApiMessages(history);
    expect(withThinking[1]?.content).toEqual([
      { type: "thinking", thinking: "hmm", signature: "sig" },
      { type: "text", text: "a" },
    ]);
    expect(withThinking).toHaveLength(3);
    expect(JSON.stringify(toApiMessages(history, { thinkingEnabled: false }))).not.toContain("thinking");
  });
});

describe("buildRequest: cache breakpoints and stable tools", () => {
  const tools = [
    testTool({ name: "Zeta", schema: z.object({ a: z.string() }) }),
    testTool({ name: "Alpha", schema: z.object({ b: z.number() }) }),
  ];

  it("breakpoints on the last system block and the last cacheable block of the last message", () => {
    const request = buildRequest({
      model: "m",
      systemPrompt: [
        { type: "text", text: "one" },
        { type: "text", text: "two" },
      ],
      tools: toolDefinitions(tools),
      messages: [
        createUserMessage("q"),
        assistant([
          {
            type: "tool_use",
            id: "t1",
            name: "Alpha",
            input: { b: 1 },
            caller: { type: "direct" },
          } as ContentBlock,
        ]),
        createUserMessage([
          { type: "tool_result", tool_use_id: "t1", content: "r" },
          { type: "text", text: "" },
        ]),
      ],
      maxOutputTokens: 8_000,
    });
    expect(request.system).toEqual([
      { type: "text", text: "one" },
      { type: "text", text: "two", cache_control: { type: "ephemeral" } },
    ]);
    const last = request.messages.at(-1)?.content as { cache_control?: unknown }[];
    // Empty text cannot carry a breakpoint: it moves back to the tool_result.
    expect(last[0]?.cache_control).toEqual({ type: "ephemeral" });
    expect(marks(request)).toBe(2);
    expect(request.tools?.map((tool) => ("name" in tool ? tool.name : ""))).toEqual(["Alpha", "Zeta"]);
  });

  it("never more than 4 breakpoints; never on thinking", () => {
    const request = buildRequest({
      model: "m",
      systemPrompt: ["a", "b", "c", "d"].map((text) => ({
        type: "text" as const,
        text,
        cache_control: { type: "ephemeral" as const },
      })),
      tools: [],
      messages: [
        createUserMessage("q"),
        assistant([
          { type: "text", text: "x", citations: null },
          { type: "thinking", thinking: "t", signature: "s" } as ContentBlock,
        ]),
      ],
      maxOutputTokens: 8_000,
      thinking: { type: "enabled", budget_tokens: 10_000 },
    });
    expect(marks(request)).toBe(4);
    expect(request.system?.[0]).not.toHaveProperty("cache_control");
    expect(request.thinking).toEqual({ type: "enabled", budget_tokens: 7_999 });
  });

  it("R-L8/R-L17: an open tool turn without its thinking block (stripped on fallback) disables thinking", () => {
    const toolUse = {
      type: "tool_use",
      id: "t1",
      name: "Alpha",
      input: { b: 1 },
      caller: { type: "direct" },
    } as ContentBlock;
    const older = assistant([
      { type: "thinking", thinking: "old", signature: "s" } as ContentBlock,
      { type: "text", text: "a", citations: null },
    ]);
    const request = buildRequest({
      model: "m",
      systemPrompt: "s",
      tools: toolDefinitions(tools),
      messages: [
        createUserMessage("q0"),
        older,
        createUserMessage("q"),
        assistant([toolUse]),
        createUserMessage([{ type: "tool_result", tool_use_id: "t1", content: "r" }]),
      ],
      maxOutputTokens: 8_000,
      thinking: { type: "enabled", budget_tokens: 2_000 },
    });
    expect(request.thinking).toBeUndefined();
    expect(JSON.stringify(request.messages)).not.toContain('"thinking"');
  });

  it("is deterministic: the same input gives the same bytes (R-F3)", () => {
    const input = {
      model: "m",
      systemPrompt: "s",
      tools: toolDefinitions(tools),
      messages: [createUserMessage("q")],
      maxOutputTokens: 100,
    };
    expect(JSON.stringify(buildRequest(input))).toBe(
      JSON.stringify(buildRequest({ ...input, tools: toolDefinitions([...tools].reverse()) })),
    );
  });
});

describe("prompt cache on the simulator", () => {
  const sims = useSimulator();
  it("the second turn reads the prefix the first turn wrote (moving message breakpoint)", async () => {
    const handle = await sims.start((request) =>
      request.turnIndex === 0
        ? { content: [{ type: "tool_use", name: "Probe", input: {} }] }
        : { content: [{ type: "text", text: "done" }] },
    );
    const { terminal } = await collect(
      query(
        simParams(handle, {
          model: "claude-sonnet-4-6",
          systemPrompt: "You are a careful engineer. ".repeat(600),
          tools: [testTool({ name: "Probe" })],
        }),
      ),
    );
    const [first, second] = handle.messageRequests();
    expect(first?.usage?.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(second?.usage?.cache_read_input_tokens).toBeGreaterThanOrEqual(
      first?.usage?.cache_creation_input_tokens ?? 1,
    );
    expect(terminal.usage.cacheReadInputTokens).toBe(second?.usage?.cache_read_input_tokens);
    expect(second?.headers["x-forkloop-query-source"]).toBe("sdk");
  });
});

describe("toolDefinitions", () => {
  it("R-V3: tools that share a schema object share its one JSON Schema conversion (one per process, not per session)", () => {
    const schema = z.object({ path: z.string() });
    const [first] = toolDefinitions([testTool({ name: "A", schema })]);
    const [second] = toolDefinitions([testTool({ name: "A", schema })]);
    expect(second?.input_schema).toEqual(first?.input_schema);
    expect(second?.input_schema.properties).toBe(first?.input_schema.properties);
  });
});
