import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "./server.js";
import { isValidThinkingSignature } from "./thinking-signature.js";
import type { Simulator } from "./types.js";

let sim: Simulator;
let client: Anthropic;

beforeAll(async () => {
  sim = await startSimulator({
    brain: () => ({
      content: [
        { type: "thinking", thinking: "The user wants the file; reading it is the first step." },
        { type: "text", text: "Let me read that file for you." },
        { type: "tool_use", name: "Read", input: { file_path: "packages/sim/src/index.ts", limit: 200 } },
      ],
    }),
  });
  client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});

const MODEL = "claude-sonnet-4-6"; // 1024-token cache minimum, 128K output, $3/$15, manual and adaptive thinking

/** Parses raw SSE text into (event, data) pairs, checking every data line has an event line. */
function parseSse(text: string): { event: string; data: Record<string, unknown> }[] {
  return text
    .split("\n\n")
    .filter((chunk) => chunk.trim() !== "")
    .map((chunk) => {
      const lines = chunk.split("\n");
      expect(lines[0]).toMatch(/^event: /);
      expect(lines[1]).toMatch(/^data: /);
      const event = lines[0]!.slice("event: ".length);
      const data = JSON.parse(lines[1]!.slice("data: ".length)) as Record<string, unknown>;
      expect(data.type).toBe(event);
      return { event, data };
    });
}

describe("SSE framing as the real API", () => {
  it("sends message_start, ping, blocks with deltas, message_delta with cumulative usage, message_stop", async () => {
    const res = await fetch(`${sim.url}/v1/messages?beta=true`, {
      method: "POST",
      headers: { "x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({
        model: MODEL,
        max_tokens: 4000,
        tools: [{ name: "Read", input_schema: { type: "object" } }],
        stream: true,
        thinking: { type: "enabled", budget_tokens: 2000 },
        messages: [{ role: "user", content: "read packages/sim/src/index.ts" }],
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("request-id")).toMatch(/^req_/);
    const events = parseSse(await res.text());
    const names = events.map((e) => e.event);
    expect(names[0]).toBe("message_start");
    expect(names).toContain("ping");
    expect(names.at(-2)).toBe("message_delta");
    expect(names.at(-1)).toBe("message_stop");

    const start = events[0]!.data.message as {
      usage: Record<string, unknown>;
      stop_reason: unknown;
      content: unknown[];
    };
    expect(start.stop_reason).toBeNull();
    expect(start.content).toEqual([]);
    expect(start.usage).toMatchObject({
      input_tokens: expect.any(Number),
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });

    const deltasOf = (index: number) =>
      events
        .filter((e) => e.event === "content_block_delta" && e.data.index === index)
        .map((e) => e.data.delta as Record<string, string>);
    // Block 0: thinking deltas, then the signature last.
    const thinking = deltasOf(0);
    expect(thinking.at(-1)?.type).toBe("signature_delta");
    expect(thinking.slice(0, -1).every((d) => d.type === "thinking_delta")).toBe(true);
    const thought = thinking
      .slice(0, -1)
      .map((d) => d.thinking)
      .join("");
    expect(isValidThinkingSignature(thought, thinking.at(-1)?.signature ?? "")).toBe(true);
    // Block 1: text deltas.
    expect(deltasOf(1).every((d) => d.type === "text_delta")).toBe(true);
    // Block 2: tool_use starts with input {} and streams its JSON in at least two fragments.
    const toolStart = events.find((e) => e.event === "content_block_start" && e.data.index === 2);
    expect(toolStart?.data.content_block).toMatchObject({ type: "tool_use", input: {}, name: "Read" });
    const fragments = deltasOf(2);
    expect(fragments.length).toBeGreaterThanOrEqual(2);
    expect(fragments.every((d) => d.type === "input_json_delta")).toBe(true);
    expect(JSON.parse(fragments.map((d) => d.partial_json).join(""))).toEqual({
      file_path: "packages/sim/src/index.ts",
      limit: 200,
    });
    // Each block is opened and closed in order.
    const blockEvents = events
      .filter((e) => e.event.startsWith("content_block_"))
      .map((e) => `${e.event}:${e.data.index}`);
    expect(blockEvents.filter((e) => e.startsWith("content_block_start"))).toEqual([
      "content_block_start:0",
      "content_block_start:1",
      "content_block_start:2",
    ]);
    const messageDelta = events.at(-2)!.data as {
      delta: { stop_reason: string };
      usage: Record<string, number>;
    };
    expect(messageDelta.delta.stop_reason).toBe("tool_use");
    expect(messageDelta.usage.input_tokens).toBe((start.usage as { input_tokens: number }).input_tokens);
    expect(messageDelta.usage.output_tokens).toBeGreaterThan(1);
  });

  it("MessageStream events and finalMessage() with thinking on; the thinking block goes back verbatim", async () => {
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 4000,
      tools: [{ name: "Read", input_schema: { type: "object" } }],
      thinking: { type: "enabled", budget_tokens: 2000 },
      messages: [{ role: "user", content: "read packages/sim/src/index.ts" }],
    });
    const seen = { thinking: "", signature: "", text: "", json: 0, blocks: 0 };
    stream.on("thinking", (delta) => {
      seen.thinking += delta;
    });
    stream.on("signature", (s) => {
      seen.signature = s;
    });
    stream.on("text", (t) => {
      seen.text += t;
    });
    stream.on("inputJson", () => {
      seen.json++;
    });
    stream.on("contentBlock", () => {
      seen.blocks++;
    });
    const message = await stream.finalMessage();
    expect(seen.thinking).toBe("The user wants the file; reading it is the first step.");
    expect(seen.text).toBe("Let me read that file for you.");
    expect(seen.json).toBeGreaterThanOrEqual(2);
    expect(seen.blocks).toBe(3);
    expect(message.content.map((b) => b.type)).toEqual(["thinking", "text", "tool_use"]);
    const tool = message.content[2] as Anthropic.ToolUseBlock;
    const next = await client.messages.create({
      model: MODEL,
      max_tokens: 4000,
      tools: [{ name: "Read", input_schema: { type: "object" } }],
      thinking: { type: "enabled", budget_tokens: 2000 },
      messages: [
        { role: "user", content: "read packages/sim/src/index.ts" },
        { role: "assistant", content: message.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: tool.id, content: "1\texport {};" }] },
      ],
    });
    expect(next.type).toBe("message");
  });

  it("drops thinking blocks when thinking is off, and adds one when on but the brain gave none", async () => {
    const off = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: "user", content: "x" }],
    });
    expect(off.content.map((b) => b.type)).toEqual(["text", "tool_use"]);
    sim.setBrain(() => ({ content: [{ type: "text", text: "plain" }] }));
    const on = await client.messages.create({
      model: "claude-opus-4-7",
      max_tokens: 100,
      thinking: { type: "adaptive" },
      messages: [{ role: "user", content: "x" }],
    });
    expect(on.content.map((b) => b.type)).toEqual(["thinking", "text"]);
    // Opus 4.7 and later omit the thinking text unless asked (R-D2, adaptive thinking page).
    expect((on.content[0] as Anthropic.ThinkingBlock).thinking).toBe("");
    const summarized = await client.messages.create({
      model: "claude-opus-4-7",
      max_tokens: 100,
      thinking: { type: "adaptive", display: "summarized" } as never,
      messages: [{ role: "user", content: "x" }],
    });
    expect((summarized.content[0] as Anthropic.ThinkingBlock).thinking).toMatch(/simulat/i);
  });

  it("max_tokens 0 pre-warms the cache: no content, stop_reason max_tokens", async () => {
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 0,
      system: [{ type: "text", text: "word ".repeat(1100), cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: "x" }],
    });
    expect(message.content).toEqual([]);
    expect(message.stop_reason).toBe("max_tokens");
    expect(message.usage.cache_creation_input_tokens).toBe(1100);
    expect(message.usage.output_tokens).toBe(0);
  });

  it("R-D2: thinking blocks of the latest assistant turn must come back all and in order", async () => {
    sim.setBrain(() => ({
      content: [
        { type: "thinking", thinking: "first thought" },
        { type: "thinking", thinking: "second thought" },
        { type: "tool_use", name: "Read", input: { file_path: "a.ts" } },
      ],
    }));
    const thinking = { type: "enabled" as const, budget_tokens: 1024 };
    const question = { role: "user" as const, content: "read a.ts" };
    const first = await client.messages.create({
      model: MODEL,
      max_tokens: 4000,
      tools: [{ name: "Read", input_schema: { type: "object" } }],
      thinking,
      messages: [question],
    });
    const [a, b, tool] = first.content as [
      Anthropic.ThinkingBlock,
      Anthropic.ThinkingBlock,
      Anthropic.ToolUseBlock,
    ];
    const followUp = (content: Anthropic.ContentBlockParam[]) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 4000,
        tools: [{ name: "Read", input_schema: { type: "object" } }],
        thinking,
        messages: [
          question,
          { role: "assistant", content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: tool.id, content: "1\tx" }] },
        ],
      });
    const modified =
      /messages\.1\.content\.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified/;
    await expect(followUp([b, a, tool])).rejects.toThrow(modified);
    await expect(followUp([b, tool])).rejects.toThrow(modified);
    await expect(followUp([a, b, tool])).resolves.toMatchObject({ type: "message" });
  });
});
