import { describe, expect, it } from "vitest";
import { toApiMessages } from "./api-messages.js";
import { createUserMessage } from "./create-message.js";
import { POST_TOOL_BATCH_CONTEXT_PREFIX } from "./post-tool-batch.js";
import { query } from "./query.js";
import { simParams, useSimulator } from "./test-support/sim-harness.js";
import { collect, testTool } from "./testing/index.js";

const sims = useSimulator();

describe("R-X1: a PostToolBatch hook's additionalContext reaches the model after the batch's results", () => {
  it("R-X1: the next request carries it in Claude Code's words after the tool results; the printed results stay the tools'", async () => {
    const handle = await sims.start((request) =>
      request.body.messages.length === 1
        ? {
            content: [
              { type: "tool_use", name: "Probe", input: { n: 1 } },
              { type: "tool_use", name: "Probe", input: { n: 2 } },
            ],
            stop_reason: "tool_use",
          }
        : { content: [{ type: "text", text: "Done." }] },
    );
    const { events, terminal } = await collect(
      query(
        simParams(handle, {
          tools: [testTool({ name: "Probe" })],
          hooks: {
            postToolBatch: [
              async ({ calls }) => ({ additionalContext: [`${calls.length} probes ran.`] }),
              async () => ({}),
              async () => ({ additionalContext: ["Codename ORANGE-KITE-4."] }),
            ],
          },
        }),
      ),
    );
    expect(terminal.reason).toBe("completed");
    const second = JSON.parse(handle.messageRequests()[1]?.rawBody ?? "{}") as {
      messages: { role: string; content: { type: string; text?: string }[] }[];
    };
    const results = second.messages.at(-1);
    expect(results?.role).toBe("user");
    expect(results?.content.map((block) => block.type)).toEqual([
      "tool_result",
      "tool_result",
      "text",
      "text",
    ]);
    expect(results?.content.slice(2).map((block) => block.text)).toEqual([
      `${POST_TOOL_BATCH_CONTEXT_PREFIX}2 probes ran.`,
      `${POST_TOOL_BATCH_CONTEXT_PREFIX}Codename ORANGE-KITE-4.`,
    ]);
    // As Claude Code prints none of it, the printed user messages hold only the tools' results.
    const printed = events.filter((event) => event.type === "user");
    expect(JSON.stringify(printed)).not.toContain("ORANGE-KITE-4");
  });

  it("R-X1: for a model that takes system messages it is one after the results, as Claude Code sends it, and it stays in the history (a resumed session sends it again)", async () => {
    const handle = await sims.start((request) =>
      request.body.messages.length === 1
        ? { content: [{ type: "tool_use", name: "Probe", input: { n: 1 } }], stop_reason: "tool_use" }
        : { content: [{ type: "text", text: "Done." }] },
    );
    const { events, terminal } = await collect(
      query(
        simParams(handle, {
          model: "claude-opus-5-5",
          tools: [testTool({ name: "Probe" })],
          hooks: { postToolBatch: [async () => ({ additionalContext: ["Codename ORANGE-KITE-4."] })] },
        }),
      ),
    );
    expect(terminal.reason).toBe("completed");
    const second = JSON.parse(handle.messageRequests()[1]?.rawBody ?? "{}") as {
      messages: { role: string; content: { type: string; text?: string }[] }[];
    };
    expect(second.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "system"]);
    expect(second.messages[2]?.content.map((block) => block.type)).toEqual(["tool_result"]);
    expect(second.messages[3]?.content.map((block) => block.text)).toEqual([
      `${POST_TOOL_BATCH_CONTEXT_PREFIX}Codename ORANGE-KITE-4.`,
    ]);
    // The marker is yielded (the transcript keeps what the loop yields) and is in the history.
    const marker = events.find((event) => event.type === "system" && event.subtype === "model_context");
    expect(marker).toMatchObject({ content: `${POST_TOOL_BATCH_CONTEXT_PREFIX}Codename ORANGE-KITE-4.` });
    expect(terminal.messages.filter((message) => message.type === "system")).toHaveLength(1);
    // A later turn: the system message stays after the results, before the model's reply.
    const next = toApiMessages([...terminal.messages, createUserMessage("And now?")], {
      systemMessages: true,
    });
    expect(next.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "system",
      "assistant",
      "user",
    ]);
    // Where a system message may not stand (before a user turn), it moves past that turn, as Claude
    // Code sends a compaction's SessionStart context after the next prompt (hooks-compact-context).
    const withQueued = [
      ...terminal.messages.filter(
        (message) => message.type !== "assistant" || message !== terminal.messages.at(-1),
      ),
      createUserMessage("Queued."),
    ];
    const queued = toApiMessages(withQueued, { systemMessages: true });
    expect(queued.map((message) => message.role)).toEqual(["user", "assistant", "user", "system"]);
    expect(JSON.stringify(queued[2])).toContain("Queued.");
    expect(JSON.stringify(queued[2])).not.toContain("ORANGE-KITE-4");
    expect(JSON.stringify(queued[3])).toContain("ORANGE-KITE-4");
    // A model without system messages gets the text in the results' turn, before the queued one.
    const older = toApiMessages(withQueued, { systemMessages: false });
    expect(older.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    const texts = JSON.stringify(older[2]);
    expect(texts.indexOf("ORANGE-KITE-4")).toBeLessThan(texts.indexOf("Queued."));
  });
});
