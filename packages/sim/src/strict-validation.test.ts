import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "./server.js";
import { sequenceBrain } from "./testing/index.js";
import type { Simulator } from "./types.js";

/**
 * R-D2: what the API refuses, the simulator refuses, with the API's status and
 * wording (pydantic-style messages, union-tagged paths). One row per rule.
 */
let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ brain: () => ({ content: [{ type: "text", text: "ok" }] }) });
});
afterAll(async () => {
  await sim.close();
});

type Body = Record<string, unknown>;
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex").toString("base64");
const JPEG = Buffer.from("ffd8ffe000104a464946000101", "hex").toString("base64");
const READ = { name: "Read", input_schema: { type: "object" } };

function body(extra: Body = {}): Body {
  return {
    model: "claude-sonnet-4-6",
    max_tokens: 100,
    messages: [{ role: "user", content: "hi" }],
    ...extra,
  };
}
const userBlocks = (...content: unknown[]) => body({ messages: [{ role: "user", content }] });
const withSystem = (system: unknown, ...content: unknown[]) => ({ ...userBlocks(...content), system });
const image = (media_type: string, data: string | undefined) => ({
  type: "image",
  source: { type: "base64", media_type, ...(data === undefined ? {} : { data }) },
});
const toolTurn = (id: string) => [
  { role: "user", content: "read a.ts" },
  { role: "assistant", content: [{ type: "tool_use", id, name: "Read", input: {} }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "x" }] },
];

async function post(payload: Body, version = "2023-06-01"): Promise<{ status: number; message: string }> {
  const res = await fetch(`${sim.url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": "k", "anthropic-version": version, "content-type": "application/json" },
    body: JSON.stringify(payload),
  });
  const json = (await res.json()) as { error?: { type: string; message: string } };
  if (res.status !== 200) expect(json.error?.type).toBe("invalid_request_error");
  return { status: res.status, message: json.error?.message ?? "" };
}

const REFUSED: readonly [string, Body, string, string?][] = [
  // Unknown fields at any level.
  [
    "an unknown top-level field",
    body({ response_format: { type: "json" } }),
    "response_format: Extra inputs are not permitted",
  ],
  [
    "an extra key in a message",
    body({ messages: [{ role: "user", content: "hi", name: "bob" }] }),
    "messages.0.name: Extra inputs are not permitted",
  ],
  [
    "an extra key in a block (tagged path)",
    userBlocks({ type: "text", text: "hi", id: 3 }),
    "messages.0.content.0.text.id: Extra inputs are not permitted",
  ],
  [
    "an extra key in metadata",
    body({ metadata: { user_id: "u", session: "s" } }),
    "metadata.session: Extra inputs are not permitted",
  ],
  [
    "an extra key in cache_control",
    userBlocks({ type: "text", text: "hi", cache_control: { type: "ephemeral", scope: "global" } }),
    "messages.0.content.0.text.cache_control.scope: Extra inputs are not permitted",
  ],
  // Images.
  [
    "an image media type outside jpeg/png/gif/webp",
    userBlocks(image("image/bmp", PNG)),
    "messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'",
  ],
  [
    "image bytes that are not the declared type",
    userBlocks(image("image/png", JPEG)),
    "messages.0.content.0.image.source.base64: The image was specified using the image/png media type, but the image appears to be a image/jpeg image",
  ],
  [
    "bad base64",
    userBlocks(image("image/png", "not base64!")),
    "messages.0.content.0.image.source.base64.data: The image data is not valid base64",
  ],
  [
    "an image without data",
    userBlocks(image("image/png", undefined)),
    "messages.0.content.0.image.source.base64.data: Field required",
  ],
  // Sampling.
  ["temperature above 1", body({ temperature: 1.5 }), "temperature: range: 0..1"],
  ["top_p below 0", body({ top_p: -0.1 }), "top_p: range: 0..1"],
  [
    "temperature and top_p together",
    body({ temperature: 0.5, top_p: 0.9, model: "claude-haiku-4-5" }),
    "`temperature` and `top_p` cannot both be specified for this model. Please use only one.",
  ],
  // Names and ids.
  [
    "a tool name outside ^[a-zA-Z0-9_-]{1,128}$",
    body({ tools: [{ name: "read file", input_schema: { type: "object" } }] }),
    "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
  ],
  [
    "a tool_use id outside ^[a-zA-Z0-9_-]+$",
    body({ tools: [READ], messages: toolTurn("toolu.1") }),
    "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
  ],
  // Text.
  [
    "a whitespace-only text block",
    userBlocks({ type: "text", text: " \n " }),
    "messages: text content blocks must contain non-whitespace text",
  ],
  [
    "a final assistant prefill ending in whitespace",
    body({
      model: "claude-haiku-4-5",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "The answer is " },
      ],
    }),
    "messages: final assistant content cannot end with trailing whitespace",
  ],
  // Tools.
  [
    "a server tool with the wrong name",
    body({ tools: [{ type: "web_search_20250305", name: "search" }] }),
    "tools.0.web_search_20250305.name: Input should be 'web_search'",
  ],
  [
    "a tool with an unknown type tag",
    body({ tools: [{ type: "teleport_20250101", name: "teleport" }] }),
    "tools.0: Input tag 'teleport_20250101' found using 'type' does not match any of the expected tags: 'custom', 'bash_20241022'",
  ],
  [
    "a custom tool without input_schema",
    body({ tools: [{ name: "Read" }] }),
    "tools.0.custom.input_schema: Field required",
  ],
  [
    "tool_use history without tools",
    body({ messages: toolTurn("toolu_1") }),
    "Requests which include `tool_use` or `tool_result` blocks must define tools.",
  ],
  // Enums.
  [
    "a service_tier outside the enum",
    body({ service_tier: "priority" }),
    "service_tier: Input should be 'auto' or 'standard_only'",
  ],
  [
    "an output_config.effort outside the enum",
    body({ output_config: { effort: "extreme" } }),
    "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'",
  ],
  // Wrong types read as the API reads them, never "Field required" or zod's own words.
  ["max_tokens as a string", body({ max_tokens: "100" }), "max_tokens: Input should be a valid integer"],
  [
    "max_tokens with a fraction",
    body({ max_tokens: 10.5 }),
    "max_tokens: Input should be a valid integer, got a number with a fractional part",
  ],
  ["max_tokens below 0", body({ max_tokens: -1 }), "max_tokens: must be greater than or equal to 0"],
  ["messages not a list", body({ messages: { role: "user" } }), "messages: Input should be a valid array"],
  ["stream not a boolean", body({ stream: "yes" }), "stream: Input should be a valid boolean"],
  [
    "content neither string nor list",
    body({ messages: [{ role: "user", content: 5 }] }),
    "messages.0.content: Input should be a valid array",
  ],
  ["a block without a type", userBlocks({ text: "hi" }), "messages.0.content.0.type: Field required"],
  [
    "a tool_choice with an unknown type",
    body({ tools: [READ], tool_choice: { type: "required" } }),
    "tool_choice: Input tag 'required' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'",
  ],
  [
    "an extra key in thinking (tagged)",
    body({ thinking: { type: "adaptive", budget_tokens: 2000 } }),
    "thinking.adaptive.budget_tokens: Extra inputs are not permitted",
  ],
  // Round three (audit D18): each row failed before its fix.
  [
    "a message without a role reads Field required, not the enum",
    body({ messages: [{ content: "hi" }] }),
    "messages.0.role: Field required",
  ],
  [
    "an image source with an unknown tag lists the image sources only",
    userBlocks({ type: "image", source: { type: "bogus" } }),
    "messages.0.content.0.image.source: Input tag 'bogus' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'",
  ],
  [
    "an extra key inside a content document source (tagged path)",
    userBlocks(
      { type: "document", source: { type: "content", content: [{ type: "text", text: "x", foo: 1 }] } },
      { type: "text", text: "q" },
    ),
    "messages.0.content.0.document.source.content.content.0.text.foo: Extra inputs are not permitted",
  ],
  [
    "an extra key in a server tool",
    body({ tools: [{ type: "web_search_20250305", name: "web_search", region: "eu" }] }),
    "tools.0.web_search_20250305.region: Extra inputs are not permitted",
  ],
  [
    "an extra key in a client tool with a version",
    body({ tools: [{ type: "bash_20250124", name: "bash", description: "run" }] }),
    "tools.0.bash_20250124.description: Extra inputs are not permitted",
  ],
  [
    "a PDF document whose bytes are not a PDF (the API's words, its `pdf` tag)",
    userBlocks(
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: PNG } },
      { type: "text", text: "q" },
    ),
    "messages.0.content.0.pdf.source.base64.data: The PDF specified was not valid.",
  ],
  [
    "a PDF in a tool result that is not base64",
    body({
      tools: [READ],
      messages: [
        toolTurn("toolu_1")[0],
        toolTurn("toolu_1")[1],
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: [
                { type: "document", source: { type: "base64", media_type: "application/pdf", data: "%%" } },
              ],
            },
          ],
        },
      ],
    }),
    "messages.2.content.0.tool_result.content.0.pdf.source.base64.data: The PDF specified was not valid.",
  ],
  [
    "a custom tool's allowed_callers outside the enum",
    body({ tools: [{ ...READ, allowed_callers: ["anyone"] }] }),
    "tools.0.custom.allowed_callers.0: Input should be 'direct', 'code_execution_20250825', 'code_execution_20260120' or 'code_execution_20260521'",
  ],
  [
    "an empty system block",
    body({ system: [{ type: "text", text: "" }] }),
    "system: text content blocks must be non-empty",
  ],
  [
    "a whitespace-only system block that is a cache breakpoint",
    body({ system: [{ type: "text", text: " \n", cache_control: { type: "ephemeral" } }] }),
    "system: text content blocks must contain non-whitespace text",
  ],
  [
    "tool_choice any without tools",
    body({ tool_choice: { type: "any" } }),
    "tool_choice.any may only be specified while providing tools",
  ],
  // The project spec's 2026-10-21 rules (wording UNCONFIRMED).
  [
    "2026-10-21: a document in an assistant message",
    body({
      messages: [
        { role: "user", content: "q" },
        {
          role: "assistant",
          content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: "d" } }],
        },
        { role: "user", content: "r" },
      ],
    }),
    "messages.1.content.0: Input tag 'document' found using 'type' does not match any of the expected tags",
    "2026-10-21",
  ],
  [
    "2026-10-21: citations on user text",
    userBlocks({ type: "text", text: "hi", citations: [{ type: "char_location", cited_text: "x" }] }),
    "messages.0.content.0.text.citations: citations are not permitted on user text blocks",
    "2026-10-21",
  ],
];

describe("R-D2: strict request validation with the API's wording", () => {
  it.each(REFUSED)("400 for %s", async (_name, payload, message, version) => {
    const result = await post(payload, version);
    expect(result.status).toBe(400);
    expect(result.message.startsWith(message)).toBe(true);
    expect(result.message).not.toMatch(/Invalid input|Too small|Too big|expected .* received/);
  });

  it.each([
    [
      "both images types and a valid prefill",
      userBlocks({ type: "text", text: "see" }, image("image/png", PNG), image("image/jpeg", JPEG)),
    ],
    [
      "a real PDF, and a whitespace-only system block without cache_control",
      withSystem(
        [{ type: "text", text: "  " }],
        {
          type: "document",
          source: {
            type: "base64",
            media_type: "application/pdf",
            data: Buffer.from("%PDF-1.4\n").toString("base64"),
          },
        },
        { type: "text", text: "q" },
      ),
    ],
    [
      "a versioned tool with its documented fields",
      body({
        tools: [
          {
            type: "web_search_20250305",
            name: "web_search",
            allowed_domains: ["a.com"],
            user_location: { type: "approximate" },
          },
          { type: "text_editor_20250728", name: "str_replace_based_edit_tool", max_characters: 1000 },
        ],
      }),
    ],
    [
      "a known server tool by its name",
      body({ tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }] }),
    ],
    [
      "a response's blocks echoed back (tool_use with caller, text with citations null)",
      body({
        tools: [READ],
        messages: [
          { role: "user", content: "read a.ts" },
          {
            role: "assistant",
            content: [
              { type: "text", text: "ok", citations: null },
              { type: "tool_use", id: "toolu_1", name: "Read", input: {}, caller: { type: "direct" } },
            ],
          },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "x" }] },
        ],
      }),
    ],
    [
      "2023-06-01 keeps a document in an assistant message",
      body({
        model: "claude-haiku-4-5",
        messages: [
          { role: "user", content: "q" },
          {
            role: "assistant",
            content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: "d" } }],
          },
          { role: "user", content: "r" },
        ],
      }),
    ],
  ])("accepted: %s", async (_name, payload) => {
    expect((await post(payload)).status).toBe(200);
  });
});

describe("R-D2: prior-turn thinking under adaptive thinking", () => {
  it("a fork may resend the parent's last turn without its thinking (placeholder results + directive); changed thinking is still refused", async () => {
    const forked = await startSimulator({
      brain: sequenceBrain([
        [
          { type: "thinking", thinking: "plan" },
          { type: "tool_use", name: "Agent", input: {} },
        ],
      ]),
    });
    try {
      const client = new Anthropic({ apiKey: "k", baseURL: forked.url, maxRetries: 0 });
      const tools = [{ name: "Agent", input_schema: { type: "object" as const } }];
      const question = { role: "user" as const, content: "fan out" };
      const parent = await client.messages.create({
        model: "claude-opus-4-8",
        max_tokens: 2000,
        thinking: { type: "adaptive" },
        tools,
        messages: [question],
      });
      const [thinking, call] = parent.content as [Anthropic.ThinkingBlock, Anthropic.ToolUseBlock];
      const placeholder = {
        type: "tool_result" as const,
        tool_use_id: call.id,
        content: "handled by the parent",
      };
      const fork = (assistant: Anthropic.ContentBlockParam[], extra: Anthropic.ContentBlockParam[]) =>
        client.messages.create({
          model: "claude-opus-4-8",
          max_tokens: 2000,
          thinking: { type: "adaptive" },
          tools,
          messages: [
            question,
            { role: "assistant", content: assistant },
            { role: "user", content: [placeholder, ...extra] },
          ],
        });
      const directive = { type: "text" as const, text: "Your task: summarise a.ts" };
      await expect(fork([call], [directive])).resolves.toMatchObject({ type: "message" });
      // Continuing the tool loop itself (only tool results) must echo the thinking.
      await expect(fork([call], [])).rejects.toThrow(/cannot be modified/);
      await expect(fork([{ ...thinking, thinking: "edited" }, call], [directive])).rejects.toThrow(
        /messages\.1\.content\.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified/,
      );
    } finally {
      await forked.close();
    }
  });
});
