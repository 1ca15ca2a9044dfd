import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "./server.js";
import { countTokens } from "./tokenizer.js";
import type { Simulator } from "./types.js";

let sim: Simulator;
let client: Anthropic;

beforeAll(async () => {
  sim = await startSimulator({ brain: () => ({ content: [{ type: "text", text: "ok" }] }) });
  client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});

const MODEL = "claude-sonnet-4-6";
const tool = (description: string) => ({
  name: "Read",
  description,
  input_schema: { type: "object" as const },
});
const base = {
  model: MODEL,
  max_tokens: 50,
  tools: [tool("reads files")],
  system: "be brief",
  messages: [
    { role: "user" as const, content: "first question" },
    { role: "assistant" as const, content: "first answer" },
    { role: "user" as const, content: "second question" },
  ],
};

async function diagnose(
  previous: string | null,
  change: Partial<typeof base> & Record<string, unknown> = {},
) {
  const message = await client.messages.create({
    ...base,
    ...change,
    diagnostics: { previous_message_id: previous },
  } as never);
  return (message as unknown as { diagnostics: { cache_miss_reason: unknown } }).diagnostics
    .cache_miss_reason;
}

describe("R-D3: prompt-cache diagnostics (diagnostics.previous_message_id)", () => {
  it("explains why a request's prefix differs from the previous one", async () => {
    const first = await client.messages.create({
      ...base,
      diagnostics: { previous_message_id: null },
    } as never);
    expect((first as unknown as { diagnostics: unknown }).diagnostics).toEqual({ cache_miss_reason: null });
    const id = first.id;
    const appended = {
      messages: [
        ...base.messages,
        { role: "assistant" as const, content: "second answer" },
        { role: "user" as const, content: "third" },
      ],
    };
    expect(await diagnose(id, appended)).toBeNull();
    expect(await diagnose(id, { model: "claude-opus-4-6" })).toMatchObject({ type: "model_changed" });
    expect(await diagnose(id, { tools: [tool("reads files, now longer")] })).toMatchObject({
      type: "tools_changed",
    });
    expect(await diagnose(id, { system: "be verbose" })).toMatchObject({ type: "system_changed" });
    expect(await diagnose(id, { tool_choice: { type: "any" } })).toEqual({ type: "unavailable" });
    const edited = await diagnose(id, {
      messages: [{ role: "user", content: "EDITED question" }, ...base.messages.slice(1)],
    });
    // Every message block from the edited one on would have been read.
    const lost = base.messages.reduce((n, m) => n + countTokens(m.content), 0);
    expect(edited).toEqual({ type: "messages_changed", cache_missed_input_tokens: lost });
    expect(await diagnose("msg_unknown")).toEqual({ type: "previous_message_not_found" });
  });

  it("reports diagnostics in message_start when streaming, and null when not asked", async () => {
    const first = await client.messages.create(base);
    expect((first as unknown as { diagnostics: unknown }).diagnostics).toBeNull();
    const stream = client.messages.stream({
      ...base,
      system: "changed",
      diagnostics: { previous_message_id: first.id },
    } as never);
    const final = await stream.finalMessage();
    expect(
      (final as unknown as { diagnostics: { cache_miss_reason: { type: string } } }).diagnostics
        .cache_miss_reason.type,
    ).toBe("system_changed");
  });
});
