import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { countTokens } from "@forkloop/sim";
import { describe, expect, it } from "vitest";
import type { AssistantMessage, Message, SystemMessage, UserMessage } from "./messages.js";
import { estimateMessageTokens, estimateTextTokens, tokenCountWithEstimation } from "./token-estimation.js";

const here = dirname(fileURLToPath(import.meta.url));

const PROSE = `The agent loop keeps a session alive for hundreds of turns. Before every call it trims old tool
results, drops what is no longer needed and, when the history nears the window, asks the model for a
summary that keeps the goal, the decisions taken, the files touched and the next step. Users complain
that compaction "loses the task" — so the summary is checked, retried, and replaced by a plain
truncation if it still fails. Café, naïve, façade: accented words count per code point.`;

const CJK = `在每次 API 调用发起之前,消息历史都会经过最多四个阶段的上下文管理处理。它们按特定次序运行,这一顺序至关重要。
剪裁会直接从消息数组中物理移除旧消息,并产出一个边界消息向 UI 告知本次移除。自動圧縮は履歴全体を要約します。
한국어 문장도 포함합니다. 絵文字も 🚀🔥 数えます。`;

function corpus(): { kind: string; text: string }[] {
  const code = readdirSync(here)
    .filter((name) => name.endsWith(".ts"))
    .map((name) => ({ kind: `code:${name}`, text: readFileSync(join(here, name), "utf8") }));
  const json = [
    { kind: "json:package", text: readFileSync(join(here, "..", "package.json"), "utf8") },
    {
      kind: "json:tool-input",
      text: JSON.stringify({
        file_path: "/repo/src/index.ts",
        edits: Array.from({ length: 20 }, (_, i) => ({
          old_string: `const a${i} = ${i};`,
          new_string: `let a${i}=[${i}]`,
        })),
      }),
    },
  ];
  return [...code, ...json, { kind: "prose", text: PROSE.repeat(5) }, { kind: "cjk", text: CJK.repeat(5) }];
}

describe("estimateTextTokens", () => {
  it("R-C8: never under the simulator's count by more than 2%, over by at most 25% (code, prose, JSON, CJK)", () => {
    const samples = corpus();
    expect(samples.some((s) => s.kind.startsWith("code:"))).toBe(true);
    for (const { kind, text } of samples) {
      const counted = countTokens(text);
      const estimated = estimateTextTokens(text);
      const ratio = estimated / counted;
      expect({ kind, ok: ratio >= 0.98 && ratio <= 1.25, ratio }).toEqual({ kind, ok: true, ratio });
    }
  });

  it("R-C8: counts punctuation-heavy JSON at least as high as the simulator (a chars/4 rule would not)", () => {
    const text = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ i, ok: i % 2 === 0 })));
    expect(estimateTextTokens(text)).toBeGreaterThanOrEqual(countTokens(text));
    expect(Math.ceil(text.length / 4)).toBeLessThan(countTokens(text));
  });
});

function user(uuid: string, text: string): UserMessage {
  return {
    type: "user",
    uuid,
    parentUuid: null,
    timestamp: "2026-01-01T00:00:00.000Z",
    message: { role: "user", content: text },
  };
}

function assistant(uuid: string, text: string, inputTokens: number): AssistantMessage {
  return {
    type: "assistant",
    uuid,
    parentUuid: null,
    timestamp: "2026-01-01T00:00:00.000Z",
    message: {
      id: `msg_${uuid}`,
      type: "message",
      role: "assistant",
      model: "m",
      content: [{ type: "text", text, citations: null }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: inputTokens,
        output_tokens: 10,
        cache_creation_input_tokens: 100,
        cache_read_input_tokens: 1_000,
      },
    } as AssistantMessage["message"],
  };
}

describe("tokenCountWithEstimation", () => {
  it("R-C8: authoritative usage of the latest response plus an estimate of what came after", () => {
    const after = user("u2", "please continue with the next file");
    const messages: Message[] = [user("u1", "hello"), assistant("a1", "hi", 5), after];
    expect(tokenCountWithEstimation(messages)).toBe(5 + 10 + 100 + 1_000 + estimateMessageTokens(after));
  });

  it("R-C8: an API-error assistant message carries no authoritative usage", () => {
    const failed: AssistantMessage = {
      ...assistant("a2", "", 0),
      apiError: { status: 400, type: "x", message: "y" },
    };
    const messages: Message[] = [user("u1", "hello"), assistant("a1", "hi", 5), user("u2", "again"), failed];
    expect(tokenCountWithEstimation(messages)).toBe(
      5 + 10 + 100 + 1_000 + estimateMessageTokens(messages[2]!) + estimateMessageTokens(failed),
    );
  });
});

describe("tokenCountWithEstimation after a compaction", () => {
  const at = (message: Message, timestamp: string): Message => ({ ...message, timestamp });
  const boundary: SystemMessage = {
    type: "system",
    subtype: "compact_boundary",
    uuid: "b",
    parentUuid: null,
    timestamp: "2026-01-01T00:05:00.000Z",
    content: "Conversation compacted",
    compactMetadata: { trigger: "auto", preTokens: 90_000, postTokens: 4_000 },
  };
  const summary = at(user("s", "summary of the conversation"), "2026-01-01T00:05:00.000Z");
  // The kept tail: a response from before the compaction, whose usage counted the old history.
  const staleReply = at(assistant("a-old", "done reading", 88_000), "2026-01-01T00:04:00.000Z");

  it("R-C8: a kept response from before the boundary is not trusted; the boundary's post count is", () => {
    const next = at(user("u3", "now the next task"), "2026-01-01T00:06:00.000Z");
    const count = tokenCountWithEstimation([boundary, summary, staleReply, next]);
    expect(count).toBe(4_000 + estimateMessageTokens(next));
  });

  it("R-C8: a response after the boundary is authoritative again", () => {
    const fresh = at(assistant("a-new", "ok", 4_500), "2026-01-01T00:06:30.000Z");
    const after = at(user("u4", "continue"), "2026-01-01T00:07:00.000Z");
    const count = tokenCountWithEstimation([boundary, summary, staleReply, fresh, after]);
    expect(count).toBe(4_500 + 10 + 100 + 1_000 + estimateMessageTokens(after));
  });

  it("R-C8: a synthetic reply with no usage is estimated, not counted as zero", () => {
    const synthetic: AssistantMessage = {
      ...assistant("a-syn", "[interrupted]", 0),
      message: {
        ...assistant("a-syn", "[interrupted]", 0).message,
        usage: {
          input_tokens: 0,
          output_tokens: 0,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      } as AssistantMessage["message"],
    };
    const messages: Message[] = [user("u1", "hello"), assistant("a1", "hi", 5), synthetic];
    expect(tokenCountWithEstimation(messages)).toBe(5 + 10 + 100 + 1_000 + estimateMessageTokens(synthetic));
  });
});

describe("estimateMessageTokens of a PDF document", () => {
  it("R-T7: a base64 PDF in a tool result counts by its pages, not by its base64 text", () => {
    const pdf = `%PDF-1.7\n${[1, 2, 3].map((n) => `${n} 0 obj << /Type /Page /Parent 9 0 R >> endobj\n`).join("")}/Type /Pages\n${"x".repeat(400_000)}`;
    const data = Buffer.from(pdf, "latin1").toString("base64");
    const message = {
      type: "user",
      uuid: "u1",
      message: {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "t1",
            content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data } }],
          },
        ],
      },
    } as unknown as UserMessage;
    // 3 pages × 3 000 (the /Pages tree node is not a page); the base64 alone would be > 100 000.
    expect(estimateMessageTokens(message)).toBe(4 + 9_000);
    expect(estimateTextTokens(data)).toBeGreaterThan(100_000);
  });
});
