import { describe, expect, it } from "vitest";
import { buildReply } from "./build-reply.js";
import type { MessagesRequest } from "./request-schema.js";
import { isValidThinkingSignature } from "./thinking-signature.js";

const body = (extra: Partial<MessagesRequest> = {}): MessagesRequest => ({
  model: "m",
  max_tokens: 1000,
  messages: [{ role: "user", content: "x" }],
  ...extra,
});
const options = (extra: Partial<MessagesRequest> = {}) => ({
  body: body(extra),
  seed: 0,
  requestDigest: "d",
  cut: false,
});

describe("building the API reply from a brain reply", () => {
  it("under adaptive thinking a reply may leave thinking out (adaptiveThinking: false); enabled thinking always thinks", () => {
    const reply = { content: [{ type: "text" as const, text: "hi" }] };
    const adaptive = options({ thinking: { type: "adaptive" } });
    expect(buildReply(reply, adaptive).content.map((b) => b.type)).toEqual(["thinking", "text"]);
    expect(buildReply({ ...reply, adaptiveThinking: false }, adaptive).content).toEqual([
      { type: "text", text: "hi" },
    ]);
    const enabled = options({ thinking: { type: "enabled", budget_tokens: 1024 } });
    expect(buildReply({ ...reply, adaptiveThinking: false }, enabled).content.map((b) => b.type)).toEqual([
      "thinking",
      "text",
    ]);
  });

  it("stop sequences cut the text and report the sequence", () => {
    const built = buildReply(
      {
        content: [
          { type: "text", text: "alpha beta STOP gamma" },
          { type: "tool_use", name: "T", input: {} },
        ],
      },
      options({ stop_sequences: ["never", "STOP"] }),
    );
    expect(built.content).toEqual([{ type: "text", text: "alpha beta " }]);
    expect(built.stopReason).toBe("stop_sequence");
    expect(built.stopSequence).toBe("STOP");
  });

  it("defaults stop_reason to tool_use when a tool is called, else end_turn; the brain may override", () => {
    expect(buildReply({ content: [{ type: "tool_use", name: "T", input: {} }] }, options()).stopReason).toBe(
      "tool_use",
    );
    expect(buildReply({ content: [{ type: "text", text: "hi" }] }, options()).stopReason).toBe("end_turn");
    expect(
      buildReply({ content: [{ type: "text", text: "no" }], stop_reason: "refusal" }, options()).stopReason,
    ).toBe("refusal");
  });

  it("signs thinking, bills it in full, and returns an empty thinking with display omitted", () => {
    const reply = { content: [{ type: "thinking" as const, thinking: "some long private reasoning here" }] };
    const shown = buildReply(reply, options({ thinking: { type: "enabled", budget_tokens: 1024 } }));
    const hidden = buildReply(
      reply,
      options({ thinking: { type: "enabled", budget_tokens: 1024, display: "omitted" } }),
    );
    const block = shown.content[0];
    expect(block?.type === "thinking" && isValidThinkingSignature(block.thinking, block.signature)).toBe(
      true,
    );
    expect(hidden.content[0]).toMatchObject({ type: "thinking", thinking: "" });
    expect(hidden.outputTokens).toBe(shown.outputTokens);
  });

  it("keeps given tool ids and generates toolu_ ids that depend on the seed and request", () => {
    const reply = {
      content: [
        { type: "tool_use" as const, name: "T", input: {} },
        { type: "tool_use" as const, name: "T", input: {}, id: "toolu_given" },
      ],
    };
    const a = buildReply(reply, options());
    const b = buildReply(reply, { ...options(), seed: 1 });
    const ids = (r: typeof a) => r.content.map((c) => (c.type === "tool_use" ? c.id : ""));
    expect(ids(a)[0]).toMatch(/^toolu_01[0-9a-f]{22}$/);
    expect(ids(a)[1]).toBe("toolu_given");
    expect(ids(b)[0]).not.toBe(ids(a)[0]);
    expect(ids(buildReply(reply, options()))).toEqual(ids(a));
  });

  it("max_tokens keeps whole blocks that fit, cuts text, drops the rest", () => {
    const built = buildReply(
      {
        content: [
          { type: "text", text: "one two three four five six" },
          { type: "tool_use", name: "T", input: { a: 1 } },
        ],
      },
      options({ max_tokens: 4 }),
    );
    expect(built.stopReason).toBe("max_tokens");
    expect(built.content).toEqual([{ type: "text", text: "one two three " }]);
    expect(built.outputTokens).toBe(4);
  });

  it("output that would overflow the context window stops with model_context_window_exceeded", () => {
    const reply = { content: [{ type: "text" as const, text: "one two three four five six" }] };
    const built = buildReply(reply, { ...options({ max_tokens: 100 }), contextRoom: 2 });
    expect(built.stopReason).toBe("model_context_window_exceeded");
    expect(built.content).toEqual([{ type: "text", text: "one two " }]);
    expect(buildReply(reply, { ...options({ max_tokens: 2 }), contextRoom: 2 }).stopReason).toBe(
      "max_tokens",
    );
  });
});
