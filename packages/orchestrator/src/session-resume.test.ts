import {
  type ApiMessage,
  createApiErrorMessage,
  createAssistantMessage,
  createSystemMessage,
  createUserMessage,
  type Message,
  type ModelInfo,
} from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { PROMPT_CACHE_TTL_SECONDS, resumedCache } from "./session-resume.js";

// $3 / $15 per million: a 5-minute cache write is $3.75 per million input tokens.
const MODEL: ModelInfo = {
  id: "test-model",
  contextWindow: 200_000,
  maxOutputTokens: 8_000,
  inputPricePerMTok: 3,
  outputPricePerMTok: 15,
};
const NOW = Date.parse("2026-12-04T12:00:00.000Z");
const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString();

function reply(
  secondsAgo: number,
  usage: { input: number; read: number; write: number; output: number },
): Message {
  const message = {
    id: "msg_test",
    type: "message",
    role: "assistant",
    model: MODEL.id,
    content: [{ type: "text", text: "ok", citations: null }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: {
      input_tokens: usage.input,
      cache_read_input_tokens: usage.read,
      cache_creation_input_tokens: usage.write,
      output_tokens: usage.output,
    },
  } as unknown as ApiMessage;
  return { ...createAssistantMessage(message), timestamp: at(secondsAgo) };
}
const prompt = (secondsAgo: number, text = "go on") => ({
  ...createUserMessage(text),
  timestamp: at(secondsAgo),
});

describe("resumedCache: a resumed session's SessionStart fields, as Claude Code's (R-X1)", () => {
  it("R-X1: the last reply's age and request size; the cache is warm within its 5 minutes; the 5-minute write price of that size", () => {
    const history = [
      prompt(100),
      reply(95, { input: 3, read: 12_000, write: 7_000, output: 997 }),
      prompt(40),
      reply(30, { input: 5, read: 19_000, write: 495, output: 500 }),
    ];
    expect(resumedCache(history, MODEL, NOW)).toEqual({
      secondsSinceLastResponse: 30,
      contextTokens: 20_000,
      promptCacheLikelyExpired: false,
      estimatedCacheWriteUsd: 0.075,
    });
    // An API error's stand-in is no reply; at its lifetime the cache is taken as gone.
    const failed = { ...createApiErrorMessage({ status: 529, type: "overloaded_error", message: "x" }, "m") };
    const expired = resumedCache(
      [...history, prompt(5), { ...failed, timestamp: at(1) }],
      MODEL,
      NOW + (PROMPT_CACHE_TTL_SECONDS - 30) * 1000,
    );
    expect(expired).toMatchObject({
      secondsSinceLastResponse: PROMPT_CACHE_TTL_SECONDS,
      contextTokens: 20_000,
      promptCacheLikelyExpired: true,
    });
  });

  it("R-X1: after a compaction with no reply since, the boundary's post-compaction tokens and a cold cache; a session with no reply has no fields", () => {
    const boundary = {
      ...createSystemMessage("Conversation compacted", "compact_boundary"),
      timestamp: at(20),
      compactMetadata: { trigger: "manual" as const, preTokens: 20_000, postTokens: 1_200 },
    };
    const history = [
      prompt(100),
      reply(95, { input: 3, read: 12_000, write: 7_000, output: 997 }),
      boundary,
      prompt(20, "<summary>…</summary>"),
      // The kept tail predates the boundary: its reply's request held the old history.
      reply(95, { input: 3, read: 12_000, write: 7_000, output: 997 }),
    ];
    expect(resumedCache(history, MODEL, NOW)).toEqual({
      secondsSinceLastResponse: 95,
      contextTokens: 1_200,
      promptCacheLikelyExpired: true,
      estimatedCacheWriteUsd: 0.0045,
    });
    expect(resumedCache([prompt(10)], MODEL, NOW)).toBeUndefined();
  });
});
