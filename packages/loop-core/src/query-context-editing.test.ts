import { describe, expect, it } from "vitest";
import { CONTEXT_MANAGEMENT_BETA, type ContextEditingConfig } from "./context-editing.js";
import { type ContextPipeline, passthroughContextPipeline } from "./context-pipeline.js";
import type { LoopEvent } from "./loop-events.js";
import type { Message, SystemMessage } from "./messages.js";
import { query } from "./query.js";
import { simParams, useSimulator, WINDOW_30K } from "./test-support/sim-harness.js";
import { collect, testTool } from "./testing/index.js";
import { estimateMessageTokens } from "./token-estimation.js";

const sims = useSimulator();
const TOOL_TURNS = 8;
/** Eight Read calls, then an answer: a long, tool-heavy session. */
const readEachTurn = ({ turnIndex }: { turnIndex: number }) =>
  turnIndex < TOOL_TURNS
    ? { content: [{ type: "tool_use" as const, name: "Read", input: { path: `/src/f${turnIndex}.ts` } }] }
    : { content: [{ type: "text" as const, text: "done" }] };
/** Each result is about `words` tokens under the simulator's tokenizer. */
const read = (words: number) =>
  testTool({ name: "Read", call: async (input) => ({ content: `${input.path}: ${"line ".repeat(words)}` }) });
const CLEAR_AFTER_3_KEEP_2: ContextEditingConfig = {
  clearToolUses: { trigger: { type: "tool_uses", value: 3 }, keep: 2 },
};

const isBoundary = (event: LoopEvent): event is SystemMessage =>
  "type" in event && event.type === "system" && event.subtype === "microcompact_boundary";

describe("R-C2: microcompact, cached variant (API context editing)", () => {
  it("R-C2: the boundary follows each response whose edits cleared tokens, with the API's reported figure", async () => {
    const handle = await sims.start(readEachTurn);
    const { events, terminal } = await collect(
      query(simParams(handle, { tools: [read(300)], contextEditing: CLEAR_AFTER_3_KEEP_2 })),
    );
    expect(terminal.reason).toBe("completed");

    // The simulator accepted every request, each sent with the beta and the edits.
    const records = handle.messageRequests();
    expect(records).toHaveLength(TOOL_TURNS + 1);
    for (const record of records) {
      expect(record.error).toBeNull();
      expect(record.headers["anthropic-beta"]).toContain(CONTEXT_MANAGEMENT_BETA);
      expect(JSON.parse(record.rawBody).context_management).toEqual({
        edits: [
          {
            type: "clear_tool_uses_20250919",
            trigger: { type: "tool_uses", value: 3 },
            keep: { type: "tool_uses", value: 2 },
          },
        ],
      });
    }
    // The edits fire once a request carries more than 3 tool uses: requests 5 to 9.
    const reported = records.flatMap((record) =>
      (record.contextManagement?.applied_edits ?? []).map((edit) => ({
        clearedInputTokens: edit.cleared_input_tokens,
        clearedToolUses: "cleared_tool_uses" in edit ? edit.cleared_tool_uses : 0,
      })),
    );
    expect(reported.map((r) => r.clearedToolUses)).toEqual([2, 3, 4, 5, 6]);

    const boundaries = events.filter(isBoundary);
    expect(
      boundaries.map((b) => ({
        clearedInputTokens: b.microcompactMetadata?.clearedInputTokens,
        clearedToolUses: b.microcompactMetadata?.clearedToolUses,
      })),
    ).toEqual(reported);
    // Each boundary comes right after the assistant message of the response that reported it.
    for (const boundary of boundaries) {
      const before = events[events.indexOf(boundary) - 1];
      expect(before && "type" in before && before.type).toBe("assistant");
      expect((before as Message).uuid).toBe(boundary.parentUuid);
      expect(boundary.microcompactMetadata?.clearedInputTokens).toBeGreaterThan(0);
    }
  });

  it("R-C2: thinking and tool-use clearing together — clear_thinking first, one boundary per response with both figures", async () => {
    const handle = await sims.start(readEachTurn);
    const { events, terminal } = await collect(
      query(
        simParams(handle, {
          tools: [read(300)],
          thinking: { type: "adaptive" },
          contextEditing: { ...CLEAR_AFTER_3_KEEP_2, clearThinking: { keep: 1 } },
        }),
      ),
    );
    expect(terminal.reason).toBe("completed");
    const records = handle.messageRequests();
    expect(records.every((record) => record.error === null)).toBe(true);
    expect(JSON.parse(records[0]?.rawBody ?? "{}").context_management.edits[0]).toEqual({
      type: "clear_thinking_20251015",
      keep: { type: "thinking_turns", value: 1 },
    });
    const reported = records.flatMap((record) => {
      const edits = record.contextManagement?.applied_edits ?? [];
      if (edits.length === 0) return [];
      const sum = (pick: (edit: (typeof edits)[number]) => number) =>
        edits.reduce((total, edit) => total + pick(edit), 0);
      return [
        {
          clearedInputTokens: sum((e) => e.cleared_input_tokens),
          clearedThinkingTurns: sum((e) => ("cleared_thinking_turns" in e ? e.cleared_thinking_turns : 0)),
        },
      ];
    });
    // From the third request on, every earlier thinking turn but the last is cleared.
    expect(reported.map((r) => r.clearedThinkingTurns)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(
      events.filter(isBoundary).map((b) => ({
        clearedInputTokens: b.microcompactMetadata?.clearedInputTokens,
        clearedThinkingTurns: b.microcompactMetadata?.clearedThinkingTurns,
      })),
    ).toEqual(reported);
  });

  it("R-C2: the boundaries stay in the loop's history (Terminal.messages) after their replies, and are never sent to the API", async () => {
    const handle = await sims.start(readEachTurn);
    const { events, terminal } = await collect(
      query(simParams(handle, { tools: [read(300)], contextEditing: CLEAR_AFTER_3_KEEP_2 })),
    );
    expect(terminal.reason).toBe("completed");
    const yielded = events.filter(isBoundary);
    expect(yielded).toHaveLength(5);
    // Every yielded boundary is in the final history, right after the reply that reported it.
    const history = terminal.messages;
    expect(history.filter((message) => message.type === "system")).toEqual(yielded);
    for (const boundary of yielded) {
      const index = history.indexOf(boundary);
      expect(history[index - 1]?.uuid).toBe(boundary.parentUuid);
    }
    // Later turns carried them in their history, yet no request body holds a boundary's text.
    for (const record of handle.messageRequests()) {
      expect(record.rawBody).not.toContain("The API cleared");
      expect(record.error).toBeNull();
    }
  });

  it("R-C2: without contextEditing no edits are sent and no boundary is yielded", async () => {
    const handle = await sims.start(readEachTurn);
    const { events } = await collect(query(simParams(handle, { tools: [read(300)] })));
    expect(events.filter(isBoundary)).toEqual([]);
    for (const record of handle.messageRequests()) {
      expect(JSON.parse(record.rawBody).context_management).toBeUndefined();
      expect(record.headers["anthropic-beta"]).toBeUndefined();
    }
  });

  it("R-X2: with thinking on, every request asks to keep all thinking (clear_thinking keep all, its beta), as Claude Code does; with tool clearing it goes first", async () => {
    const handle = await sims.start(readEachTurn);
    const { terminal } = await collect(
      query(simParams(handle, { tools: [read(50)], thinking: { type: "adaptive" } })),
    );
    expect(terminal.reason).toBe("completed");
    for (const record of handle.messageRequests()) {
      expect(JSON.parse(record.rawBody).context_management).toEqual({
        edits: [{ type: "clear_thinking_20251015", keep: "all" }],
      });
      expect(record.headers["anthropic-beta"]).toBe(CONTEXT_MANAGEMENT_BETA);
      expect(record.error).toBeNull();
    }
    const combined = await sims.start(readEachTurn);
    await collect(
      query(
        simParams(combined, {
          tools: [read(50)],
          thinking: { type: "adaptive" },
          contextEditing: CLEAR_AFTER_3_KEEP_2,
        }),
      ),
    );
    const first = JSON.parse(combined.messageRequests()[0]?.rawBody ?? "{}");
    expect(first.context_management.edits.map((edit: { type: string }) => edit.type)).toEqual([
      "clear_thinking_20251015",
      "clear_tool_uses_20250919",
    ]);
    expect(first.context_management.edits[0]).toEqual({ type: "clear_thinking_20251015", keep: "all" });
  });

  it("R-C2/R-C8: with context editing the hard limit counts the response's usage, not the client's view of cleared results", async () => {
    // The loop believes the window is 30,000 tokens: hard limit 19,000.
    // A pipeline counting every message as the client holds it: cleared results still count.
    const clientSideCount: ContextPipeline = {
      ...passthroughContextPipeline,
      tokenCount: (messages) => messages.reduce((sum, m) => sum + estimateMessageTokens(m), 0),
    };
    const run = async (contextEditing: ContextEditingConfig | undefined) => {
      const handle = await sims.start(readEachTurn);
      const { terminal } = await collect(
        query(
          simParams(handle, {
            tools: [read(3_000)],
            contextPipeline: clientSideCount,
            autoCompactEnabled: false,
            modelOverrides: [WINDOW_30K],
            ...(contextEditing ? { contextEditing } : {}),
          }),
        ),
      );
      return terminal.reason;
    };
    // Eight results of ~3,000 tokens: the client's count passes 19,000 by the seventh request.
    expect(await run(undefined)).toBe("blocking_limit");
    expect(await run(CLEAR_AFTER_3_KEEP_2)).toBe("completed");
  });
});
