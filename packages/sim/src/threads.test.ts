import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator } from "./server.js";
import type { BrainRequest, Simulator } from "./types.js";

// Message threads, implemented (R-D2): https://platform.claude.com/docs/en/build-with-claude/message-threads
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const BETA = ["message-threads-2026-08-12"];

describe("R-D2: message threads keep the conversation on the simulator", () => {
  it("R-D2: create stores system, tools and the reply; continue sends only new messages; the brain sees it all; expiry → 404 thread_not_found", async () => {
    let clock = 1_000_000;
    const seen: BrainRequest[] = [];
    sim = await startSimulator({
      clock: () => clock,
      brain: (req) => {
        seen.push(req);
        return { content: [{ type: "text", text: `reply ${seen.length}` }] };
      },
    });
    const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    const tools = [
      { name: "Read", description: "read", input_schema: { type: "object" as const, properties: {} } },
    ];
    const first = await client.beta.messages.create({
      model: "claude-opus-5-5",
      max_tokens: 100,
      system: "You are terse.",
      tools,
      messages: [{ role: "user", content: "one" }],
      thread: { type: "create" },
      betas: BETA,
    } as never);
    const second = await client.beta.messages.create({
      model: "claude-opus-5-5",
      max_tokens: 100,
      messages: [{ role: "user", content: "two" }],
      thread: { type: "continue", previous_message_id: (first as { id: string }).id },
      betas: BETA,
    } as never);
    expect((second as { content: { text: string }[] }).content[0]?.text).toBe("reply 2");
    const rebuilt = seen[1]?.body;
    expect(rebuilt?.system).toBe("You are terse.");
    expect(rebuilt?.tools?.map((t) => t.name)).toEqual(["Read"]);
    expect(rebuilt?.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(sim.requests().every((r) => r.status === 200)).toBe(true);

    clock += 5 * 60 * 1000 + 1;
    const expired = await client.beta.messages
      .create({
        model: "claude-opus-5-5",
        max_tokens: 100,
        messages: [{ role: "user", content: "three" }],
        thread: { type: "continue", previous_message_id: (second as { id: string }).id },
        betas: BETA,
      } as never)
      .catch((e: unknown) => e);
    expect(expired).toBeInstanceOf(Anthropic.NotFoundError);
    expect((expired as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({
      error: { type: "not_found_error", details: { error_code: "thread_not_found" } },
    });
  });
});
