import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "./server.js";
import { signThinking } from "./thinking-signature.js";
import type { Simulator } from "./types.js";

/**
 * A request shaped like what the Claude Code CLI sends (reference/claude-code-wire.md): the
 * simulator must accept it unchanged and account its three cache breakpoints.
 */
let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({
    brain: (request) =>
      request.turnIndex === 0
        ? { content: [{ type: "tool_use", name: "Read", input: { file_path: "/repo/a.ts" } }] }
        : { content: [{ type: "text", text: "done" }] },
  });
});
afterAll(async () => {
  await sim.close();
});

const cc = { type: "ephemeral" } as const;
const tools = Array.from({ length: 14 }, (_, i) => ({
  name: i === 0 ? "Read" : `Tool${i}`,
  description: `Tool ${i}. ${"Does a thing. ".repeat(40)}`,
  input_schema: { type: "object", properties: { file_path: { type: "string" } } },
  ...(i > 10 ? { defer_loading: true } : {}),
}));

function body(messages: unknown[]): string {
  return JSON.stringify({
    model: "claude-opus-4-8",
    max_tokens: 64000,
    stream: true,
    thinking: { type: "adaptive", display: "summarized" },
    output_config: { effort: "medium" },
    context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
    metadata: { user_id: JSON.stringify({ device_id: "d", session_id: "s" }) },
    system: [
      { type: "text", text: "x-anthropic-billing-header: cc_version=2.1.332; cc_entrypoint=sdk-cli" },
      { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: cc },
      { type: "text", text: "Main prompt. ".repeat(1500), cache_control: cc },
    ],
    tools,
    messages,
  });
}

async function send(
  messages: unknown[],
): Promise<{ status: number; events: { event: string; data: Record<string, unknown> }[] }> {
  const res = await fetch(`${sim.url}/v1/messages?beta=true`, {
    method: "POST",
    headers: {
      "x-api-key": "sk-ant-local",
      "anthropic-version": "2023-06-01",
      "anthropic-beta":
        "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,effort-2025-11-24",
      "x-app": "cli",
      "content-type": "application/json",
    },
    body: body(messages),
  });
  const text = await res.text();
  const events = text
    .split("\n\n")
    .filter((chunk) => chunk.startsWith("event: "))
    .map((chunk) => {
      const [eventLine = "", dataLine = ""] = chunk.split("\n");
      return { event: eventLine.slice(7), data: JSON.parse(dataLine.slice(6)) as Record<string, unknown> };
    });
  return { status: res.status, events };
}

const usageOf = (events: { event: string; data: Record<string, unknown> }[]) =>
  (events.find((e) => e.event === "message_delta")?.data.usage ?? {}) as Record<string, number>;

describe("R-D2: a Claude-Code-shaped conversation", () => {
  it("is accepted, and its second turn reads the first turn's prefix", async () => {
    const first = [
      {
        role: "user",
        content: [
          { type: "text", text: "<system-reminder>context</system-reminder>" },
          { type: "text", text: "Summarize /repo/a.ts", cache_control: cc },
        ],
      },
    ];
    const turn1 = await send(first);
    expect(turn1.status).toBe(200);
    const start = turn1.events.find(
      (e) =>
        e.event === "content_block_start" && (e.data.content_block as { type: string }).type === "tool_use",
    );
    const toolUse = start?.data.content_block as { id: string; name: string };
    const thinking = turn1.events.filter(
      (e) => (e.data.delta as { type?: string } | undefined)?.type === "thinking_delta",
    );
    const thought = thinking.map((e) => (e.data.delta as { thinking: string }).thinking).join("");
    const u1 = usageOf(turn1.events);
    expect(u1.cache_read_input_tokens).toBe(0);
    expect(u1.cache_creation_input_tokens).toBeGreaterThan(2048);

    const second = [
      {
        role: "user",
        content: [
          { type: "text", text: "<system-reminder>context</system-reminder>" },
          { type: "text", text: "Summarize /repo/a.ts" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: thought, signature: signThinking(thought) },
          { type: "tool_use", id: toolUse.id, name: toolUse.name, input: { file_path: "/repo/a.ts" } },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: toolUse.id,
            content: "     1\texport const a = 1;",
            cache_control: cc,
          },
        ],
      },
      // Right after a user turn, as the mid-conversation system messages page places them.
      { role: "system", content: "mid-conversation system note" },
    ];
    const turn2 = await send(second);
    expect(turn2.status).toBe(200);
    const u2 = usageOf(turn2.events);
    expect(u2.cache_read_input_tokens).toBe(u1.cache_creation_input_tokens);
    expect(u2.cache_creation_input_tokens).toBeGreaterThan(0);
    // Only the system note follows the last breakpoint.
    expect(u2.input_tokens).toBeGreaterThan(0);
    expect(u2.input_tokens).toBeLessThan(20);
  });
});
