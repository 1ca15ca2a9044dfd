import Anthropic from "@anthropic-ai/sdk";
import type { BetaMessageParam } from "@anthropic-ai/sdk/resources/beta/messages/messages";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startSimulator } from "./server.js";
import { textOfTokens } from "./testing/index.js";
import type { Simulator } from "./types.js";

/** api doc §9 over several requests: thinking turns, and what an edit does to the prompt cache. */
const BETA = "context-management-2025-06-27";
const MODEL = "claude-sonnet-4-6"; // keeps prior thinking; minimum cacheable length 1024; classic tokenizer
const READ = [{ name: "Read", description: "read a file", input_schema: { type: "object" as const } }];
const EPH = { type: "ephemeral" } as const;

let sim: Simulator;
let client: Anthropic;
beforeEach(async () => {
  let calls = 0;
  // Three tool turns, then an answer; each tool turn thinks first (the simulator signs it).
  sim = await startSimulator({
    brain: () =>
      calls++ < 3
        ? { content: [{ type: "tool_use", name: "Read", input: { path: `/f${calls}` } }] }
        : { content: [{ type: "text", text: "done" }] },
  });
  client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
});
afterEach(async () => {
  await sim.close();
});

/** Plays the tool loop to its end; returns the history with every thinking turn sent back. */
async function thinkingSession(): Promise<BetaMessageParam[]> {
  const messages: BetaMessageParam[] = [{ role: "user", content: "Read three files." }];
  for (;;) {
    const reply = await client.beta.messages.create({
      model: MODEL,
      max_tokens: 2_000,
      thinking: { type: "adaptive" },
      tools: READ,
      messages,
    });
    const toolUse = reply.content.find((b) => b.type === "tool_use");
    if (!toolUse) return messages;
    messages.push({
      role: "assistant",
      content: reply.content as Anthropic.Beta.Messages.BetaContentBlockParam[],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: toolUse.id, content: textOfTokens(50, "resx") }],
    });
  }
}

describe("api doc §9: clear_thinking_20251015", () => {
  it.each([
    { keep: undefined, turns: 2 },
    { keep: { type: "thinking_turns" as const, value: 2 }, turns: 1 },
    { keep: "all" as const, turns: 0 },
  ])("keep $keep clears $turns of 3 thinking turns", async ({ keep, turns }) => {
    const messages = await thinkingSession();
    const base = { model: MODEL, thinking: { type: "adaptive" as const }, tools: READ, messages };
    const original = await client.beta.messages.countTokens({ ...base });
    const message = await client.beta.messages.create({
      ...base,
      max_tokens: 2_000,
      betas: [BETA],
      context_management: {
        edits: [{ type: "clear_thinking_20251015", ...(keep === undefined ? {} : { keep }) }],
      },
    });
    const applied = message.context_management?.applied_edits ?? [];
    if (turns === 0) {
      expect(applied).toEqual([]);
      return;
    }
    expect(applied).toEqual([
      {
        type: "clear_thinking_20251015",
        cleared_thinking_turns: turns,
        cleared_input_tokens: original.input_tokens - message.usage.input_tokens,
      },
    ]);
    expect(applied[0]?.cleared_input_tokens).toBeGreaterThan(0);
  });
});

describe("api doc §5 + §9: an edit invalidates the cache from the first cleared position", () => {
  /** A cached system prompt, then four tool uses; the last result carries the moving breakpoint. */
  function body(clearWith: number | null): Anthropic.Beta.Messages.MessageCreateParamsNonStreaming {
    const messages: BetaMessageParam[] = [{ role: "user", content: "Go." }];
    for (let i = 0; i < 4; i++) {
      messages.push({
        role: "assistant",
        content: [{ type: "tool_use", id: `toolu_${i}`, name: "Read", input: {} }],
      });
      messages.push({
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: `toolu_${i}`,
            content: textOfTokens(400, `r${i}x`),
            ...(i === 3 ? { cache_control: EPH } : {}),
          },
        ],
      });
    }
    return {
      model: MODEL,
      max_tokens: 100,
      betas: [BETA],
      system: [{ type: "text", text: textOfTokens(1_200, "sysx"), cache_control: EPH }],
      tools: READ,
      messages,
      ...(clearWith === null
        ? {}
        : {
            context_management: {
              edits: [
                {
                  type: "clear_tool_uses_20250919",
                  trigger: { type: "tool_uses", value: 1 },
                  keep: { type: "tool_uses", value: clearWith },
                },
              ],
            },
          }),
    };
  }

  it("reads the prefix before the cleared result, writes the edited rest, then reads it all", async () => {
    const warm = await client.beta.messages.create(body(null));
    const total = warm.usage.cache_creation_input_tokens ?? 0;
    expect(warm.usage.cache_read_input_tokens).toBe(0);
    expect(total).toBeGreaterThan(2_800);

    const systemAndTools = await prefixTokens();
    const edited = await client.beta.messages.create(body(2));
    const cleared = edited.context_management?.applied_edits[0]?.cleared_input_tokens ?? 0;
    expect(cleared).toBeGreaterThan(700);
    // The system breakpoint's entry survives; everything from the first cleared result is new.
    expect(edited.usage.cache_read_input_tokens).toBe(systemAndTools);
    expect(edited.usage.cache_creation_input_tokens).toBe(total - systemAndTools - cleared);

    // The same edit next turn gives the same edited prompt: its cache key matches, a full read.
    const again = await client.beta.messages.create(body(2));
    expect(again.usage.cache_read_input_tokens).toBe(total - cleared);
    expect(again.usage.cache_creation_input_tokens).toBe(0);
  });

  async function prefixTokens(): Promise<number> {
    const { input_tokens } = await client.beta.messages.countTokens({
      model: MODEL,
      system: [{ type: "text", text: textOfTokens(1_200, "sysx") }],
      tools: READ,
      messages: [{ role: "user", content: "x" }],
    });
    return input_tokens - 1; // "x" is one token
  }
});
