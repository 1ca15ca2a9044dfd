import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODELS } from "./model-registry.js";
import { startSimulator } from "./server.js";
import { signThinking } from "./thinking-signature.js";
import type { Simulator } from "./types.js";

let sim: Simulator;
let client: Anthropic;

beforeAll(async () => {
  const tiny = {
    ...MODELS.find((m) => m.id === "claude-haiku-4-5-20251001")!,
    id: "tiny-model",
    aliases: [],
    contextWindow: 50,
  };
  sim = await startSimulator({
    models: [tiny],
    brain: () => ({ content: [{ type: "text", text: "ok" }] }),
  });
  client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});

type Params = Anthropic.MessageCreateParamsNonStreaming;
const MODEL = "claude-sonnet-4-6"; // 1024-token cache minimum, 128K output, $3/$15, manual and adaptive thinking
const READ_TOOL = { name: "Read", input_schema: { type: "object" as const } };
/** A valid request; one whose history has tool blocks also defines the Read tool (the API requires it). */
const base = (extra: Partial<Params> = {}): Params => {
  const params: Params = {
    model: MODEL,
    max_tokens: 2000,
    messages: [{ role: "user", content: "hello" }],
    ...extra,
  };
  const toolBlocks = JSON.stringify(params.messages).includes('"type":"tool_');
  return toolBlocks && params.tools === undefined ? { ...params, tools: [READ_TOOL] } : params;
};

async function rejection(params: unknown): Promise<InstanceType<typeof Anthropic.APIError>> {
  try {
    await client.messages.create(params as Params, { timeout: 30_000 });
  } catch (error) {
    if (error instanceof Anthropic.APIError) return error;
    throw error;
  }
  throw new Error("expected the simulator to reject the request");
}

/** The API's error body and wording. */
async function expect400(params: unknown, message: string | RegExp): Promise<void> {
  const error = await rejection(params);
  expect(error).toBeInstanceOf(Anthropic.BadRequestError);
  const body = error.error as { type: string; error: { type: string; message: string }; request_id: string };
  expect(body.type).toBe("error");
  expect(body.error.type).toBe("invalid_request_error");
  expect(body.request_id).toBe(error.requestID);
  if (typeof message === "string") expect(body.error.message).toBe(message);
  else expect(body.error.message).toMatch(message);
}

const toolUse = (id: string) => ({
  type: "tool_use" as const,
  id,
  name: "Read",
  input: { file_path: "a.ts" },
});
const toolResult = (id: string) => ({ type: "tool_result" as const, tool_use_id: id, content: "1\tx" });

describe("R-D2: validation as strict as the API", () => {
  it("missing required fields", async () => {
    await expect400(
      { model: MODEL, messages: [{ role: "user", content: "x" }] },
      "max_tokens: Field required",
    );
    await expect400({ model: MODEL, max_tokens: 10 }, "messages: Field required");
    await expect400(
      base({ messages: [{ role: "user", content: [{ type: "text" }] }] as never }),
      "messages.0.content.0.text.text: Field required",
    );
  });

  it("bad enum values and unknown block types", async () => {
    await expect400(
      base({ messages: [{ role: "bot", content: "x" }] } as never),
      'messages: Unexpected role "bot". Allowed roles are "user" or "assistant"',
    );
    await expect400(
      base({ messages: [{ role: "user", content: [{ type: "foo" }] }] } as never),
      /^messages\.0\.content\.0: Input tag 'foo' found using 'type' does not match any of the expected tags: 'text', 'image', 'document'/,
    );
  });

  it("unknown model → 404 not_found_error naming the model", async () => {
    const error = await rejection(base({ model: "claude-nonexistent-9" }));
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    expect((error.error as { error: { type: string; message: string } }).error).toEqual({
      type: "not_found_error",
      message: "model: claude-nonexistent-9",
    });
  });

  it("a tool_use without a tool_result at the start of the next user message", async () => {
    await expect400(
      base({
        messages: [
          { role: "user", content: "read a.ts" },
          { role: "assistant", content: [toolUse("toolu_1")] },
          { role: "user", content: "what now?" },
        ],
      }),
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    );
    // The tool_result exists but does not come first.
    await expect400(
      base({
        messages: [
          { role: "user", content: "read a.ts" },
          { role: "assistant", content: [toolUse("toolu_1")] },
          { role: "user", content: [{ type: "text", text: "here" }, toolResult("toolu_1")] },
        ],
      }),
      /^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/,
    );
  });

  it("a tool_result for an unknown id", async () => {
    await expect400(
      base({
        messages: [
          { role: "user", content: "read a.ts" },
          { role: "assistant", content: [toolUse("toolu_1")] },
          { role: "user", content: [toolResult("toolu_1"), toolResult("toolu_2")] },
        ],
      }),
      "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_2. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    );
  });

  it("more than 4 cache breakpoints", async () => {
    const cc = { type: "ephemeral" as const };
    await expect400(
      base({
        system: [1, 2, 3].map((i) => ({ type: "text" as const, text: `s${i}`, cache_control: cc })),
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "a", cache_control: cc },
              { type: "text", text: "b", cache_control: cc },
            ],
          },
        ],
      }),
      "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    );
  });

  it("cache_control on empty text and on thinking", async () => {
    await expect400(
      base({
        messages: [
          { role: "user", content: [{ type: "text", text: "", cache_control: { type: "ephemeral" } }] },
        ],
      }),
      "messages.0.content.0.text: cache_control cannot be set for empty text blocks",
    );
    await expect400(
      base({
        messages: [
          { role: "user", content: "q" },
          {
            role: "assistant",
            content: [
              {
                type: "thinking",
                thinking: "t",
                signature: signThinking("t"),
                cache_control: { type: "ephemeral" },
              } as never,
            ],
          },
          { role: "user", content: "again" },
        ],
      }),
      "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted",
    );
  });

  it("a modified thinking block (signature check)", async () => {
    const thinking = (text: string, signed: string) => ({
      type: "thinking" as const,
      thinking: text,
      signature: signThinking(signed),
    });
    const messages = (first: ReturnType<typeof thinking>, latest: ReturnType<typeof thinking>) => [
      { role: "user" as const, content: "q1" },
      { role: "assistant" as const, content: [first, { type: "text" as const, text: "a1" }] },
      { role: "user" as const, content: "q2" },
      { role: "assistant" as const, content: [latest, toolUse("toolu_9")] },
      { role: "user" as const, content: [toolResult("toolu_9")] },
    ];
    const thinkingOn = { thinking: { type: "enabled" as const, budget_tokens: 1024 } };
    await expect400(
      base({ ...thinkingOn, messages: messages(thinking("a", "a"), thinking("edited", "original")) }),
      "messages.3.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.",
    );
    await expect400(
      base({ ...thinkingOn, messages: messages(thinking("edited", "original"), thinking("b", "b")) }),
      "messages.1.content.0: Invalid `signature` in `thinking` block",
    );
    const ok = await client.messages.create(
      base({ ...thinkingOn, messages: messages(thinking("a", "a"), thinking("b", "b")) }),
    );
    expect(ok.type).toBe("message");
  });

  it("thinking budget ≥ max_tokens", async () => {
    await expect400(
      base({ max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 2000 } }),
      /^`max_tokens` must be greater than `thinking.budget_tokens`/,
    );
    await expect400(
      base({ thinking: { type: "enabled", budget_tokens: 500 } }),
      /budget_tokens: Input should be greater than or equal to 1024/,
    );
  });

  it("max_tokens above the model's maximum, with the API's exact text", async () => {
    await expect400(
      base({ max_tokens: 128001 }),
      "max_tokens: 128001 > 128000, which is the maximum allowed number of output tokens for this model",
    );
  });

  it("a prompt over the context window", async () => {
    await expect400(
      base({
        model: "tiny-model",
        max_tokens: 10,
        messages: [{ role: "user", content: "word ".repeat(60) }],
      }),
      "prompt is too long: 60 tokens > 50 maximum",
    );
  });

  it("thinking types a model does not support", async () => {
    await expect400(
      base({ model: "claude-opus-4-7", thinking: { type: "enabled", budget_tokens: 1024 } }),
      '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
    );
    await expect400(
      base({ model: "claude-haiku-4-5", thinking: { type: "adaptive" } } as never),
      "adaptive thinking is not supported on this model",
    );
  });

  it("a trailing assistant message (prefill) on a 4.6+ model", async () => {
    await expect400(
      base({
        model: "claude-sonnet-4-6",
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: "The answer is" },
        ],
      }),
      "This model does not support assistant message prefill. The conversation must end with a user message.",
    );
  });

  it("sampling parameters under anthropic-version 2026-10-21", async () => {
    await expect400(base({ temperature: 0.5 } as never), "temperature: Extra inputs are not permitted");
  });

  it("sampling parameters under 2023-06-01: thinking needs temperature 1; models after Opus 4.6 restrict them", async () => {
    const post = (body: object) =>
      fetch(`${sim.url}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: { message: string } } }));
    expect((await post({ ...base(), temperature: 0.2 })).status).toBe(200);
    const thinking = await post({
      ...base(),
      temperature: 0.2,
      thinking: { type: "enabled", budget_tokens: 1024 },
    });
    expect(thinking.body.error?.message).toMatch(
      /^`temperature` may only be set to 1 when thinking is enabled/,
    );
    const opus47 = { ...base(), model: "claude-opus-4-7" };
    expect((await post({ ...opus47, temperature: 1 })).status).toBe(200);
    expect((await post({ ...opus47, temperature: 0.5 })).status).toBe(400);
    expect((await post({ ...opus47, top_p: 0.5 })).status).toBe(400);
    expect((await post({ ...opus47, top_p: 0.99 })).status).toBe(400);
    expect((await post({ ...opus47, top_k: 5 })).status).toBe(400);
  });

  it("empty content", async () => {
    await expect400(
      base({ messages: [{ role: "user", content: "" }] }),
      "messages.0: user messages must have non-empty content",
    );
    await expect400(
      base({ messages: [{ role: "user", content: [{ type: "text", text: "" }] }] }),
      "messages: text content blocks must be non-empty",
    );
  });

  it("records the validation error", async () => {
    sim.clearRequests();
    await rejection(base({ max_tokens: 128001 }));
    const [record] = sim.requests();
    expect(record?.status).toBe(400);
    expect(record?.error?.type).toBe("invalid_request_error");
    expect(record?.usage).toBeNull();
  });
});

describe("R-D2: accepts what the API accepts", () => {
  it("role:system messages in messages[] (Opus 4.8 on), beta fields with their beta, string or block content, ?beta=true", async () => {
    const messages = [
      { role: "user", content: "q1" },
      { role: "assistant", content: [{ type: "text", text: "a1" }] },
      { role: "user", content: [{ type: "text", text: "q2" }] },
      { role: "system", content: "mid-conversation note" },
    ];
    const message = await client.beta.messages.create({
      model: "claude-opus-4-8",
      max_tokens: 100,
      betas: ["context-management-2025-06-27"],
      context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
      messages,
    } as never);
    expect(message.type).toBe("message");
    const record = sim.requests().at(-1);
    expect(record?.path).toBe("/v1/messages");
    expect(record?.headers["anthropic-beta"]).toBe("context-management-2025-06-27");
    // Models released before Opus 4.8 refuse them (mid-conversation system messages page).
    await expect400(
      base({ messages } as never),
      'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.',
    );
  });

  it("a prefill on a model that supports it", async () => {
    const message = await client.messages.create(
      base({
        model: "claude-haiku-4-5",
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: "The answer is" },
        ],
      }),
    );
    expect(message.stop_reason).toBe("end_turn");
  });

  it("x-api-key with anthropic-version 2023-06-01, and Bearer with 2026-10-21", async () => {
    const body = JSON.stringify(base({ max_tokens: 10 }));
    const viaKey = await fetch(`${sim.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body,
    });
    expect(viaKey.status).toBe(200);
    const viaBearer = await fetch(`${sim.url}/v1/messages`, {
      method: "POST",
      headers: {
        authorization: "Bearer k",
        "anthropic-version": "2026-10-21",
        "content-type": "application/json",
      },
      body,
    });
    expect(viaBearer.status).toBe(200);
    expect(viaBearer.headers.get("request-id")).toMatch(/^req_/);
  });

  it("a missing key → 401 authentication_error with a request-id", async () => {
    const res = await fetch(`${sim.url}/v1/messages`, {
      method: "POST",
      headers: { "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify(base()),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("request-id")).toMatch(/^req_/);
    const body = (await res.json()) as { error: { type: string }; request_id: string };
    expect(body.error.type).toBe("authentication_error");
    expect(body.request_id).toBe(res.headers.get("request-id"));
  });
});

describe("R-D2: more API rules", () => {
  it("tool names must be unique; tool_choice must name a tool; tool_use ids must be unique", async () => {
    const tool = { name: "Read", input_schema: { type: "object" as const } };
    await expect400(base({ tools: [tool, tool] }), "tools: Tool names must be unique.");
    await expect400(
      base({ tools: [tool], tool_choice: { type: "tool", name: "Write" } }),
      "Tool 'Write' not found in provided tools",
    );
    await expect400(
      base({
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: [toolUse("toolu_1"), toolUse("toolu_1")] },
          { role: "user", content: [toolResult("toolu_1")] },
        ],
      }),
      "messages.1.content.1: `tool_use` ids must be unique",
    );
  });

  it("an image over 5 MB, also inside a tool_result (a media-size error clients recover from)", async () => {
    const big = {
      type: "image" as const,
      source: { type: "base64" as const, media_type: "image/png" as const, data: "A".repeat(7_000_000) },
    };
    await expect400(
      base({ messages: [{ role: "user", content: [{ type: "text", text: "look" }, big] }] }),
      "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: 5250000 bytes > 5242880 bytes",
    );
    await expect400(
      base({
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: [toolUse("toolu_1")] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [big] }] },
        ],
      }),
      /^messages\.2\.content\.0\.tool_result\.content\.0\.image\.source\.base64: image exceeds 5 MB maximum/,
    );
  });

  it("blocks in the wrong role's message", async () => {
    await expect400(
      base({ messages: [{ role: "user", content: [toolUse("toolu_1")] }] } as never),
      /^messages\.0\.content\.0: Input tag 'tool_use' found using 'type' does not match any of the expected tags: 'text', 'image'/,
    );
    await expect400(
      base({
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: [toolResult("toolu_1")] },
          { role: "user", content: "r" },
        ],
      } as never),
      /^messages\.1\.content\.0: Input tag 'tool_result' found/,
    );
  });

  it("with thinking enabled, the assistant turn before trailing tool results must start with thinking", async () => {
    await expect400(
      base({
        thinking: { type: "enabled", budget_tokens: 1024 },
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: [{ type: "text", text: "reading" }, toolUse("toolu_1")] },
          { role: "user", content: [toolResult("toolu_1")] },
        ],
      }),
      /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `text`\. When `thinking` is enabled, a final `assistant` message must start with a thinking block/,
    );
  });
});
