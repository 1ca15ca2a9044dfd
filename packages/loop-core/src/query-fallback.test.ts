import { describe, expect, it } from "vitest";
import { createUserMessage } from "./create-message.js";
import { FallbackTriggeredError } from "./errors.js";
import { query } from "./query.js";
import type { QueryDeps } from "./query-deps.js";
import { simParams, useSimulator } from "./test-support/sim-harness.js";
import { collect, scriptedCallModel, testContext, testTool } from "./testing/index.js";

const sims = useSimulator();

describe("R-L8: model fallback", () => {
  it("R-L8: a primary that stays overloaded (529) switches to the fallback and strips thinking", async () => {
    const handle = await sims.start((request) =>
      request.turnIndex === 0
        ? {
            content: [
              { type: "thinking", thinking: "plan" },
              { type: "tool_use", name: "Probe", input: {} },
            ],
          }
        : { content: [{ type: "text", text: "done" }] },
    );
    // Request 1 succeeds (thinking + tool_use); requests 2–4 are overloaded.
    handle.sim.setFaults({ schedule: [{ kind: "529", from: 2, to: 4 }] });
    const { events, terminal } = await collect(
      query(
        simParams(handle, {
          model: "claude-opus-4-6",
          fallbackModels: ["claude-sonnet-4-6"],
          thinking: { type: "enabled", budget_tokens: 1_024 },
          tools: [testTool({ name: "Probe" })],
          retry: { baseDelayMs: 1, maxDelayMs: 2, maxOverloadedRetries: 3 },
        }),
      ),
    );
    expect(terminal.error).toBeUndefined();
    expect(terminal.reason).toBe("completed");
    expect(events.filter((event) => event.type === "model_fallback")).toEqual([
      { type: "model_fallback", from: "claude-opus-4-6", to: "claude-sonnet-4-6" },
    ]);
    const requests = handle.messageRequests();
    expect(requests.map((record) => record.model)).toEqual([
      "claude-opus-4-6",
      "claude-opus-4-6",
      "claude-opus-4-6",
      "claude-opus-4-6",
      "claude-sonnet-4-6",
    ]);
    expect(requests[3]?.rawBody).toContain('"type":"thinking"');
    // Signatures are bound to the model that wrote them: none go to the fallback.
    expect(requests[4]?.rawBody).not.toContain('"signature"');
    expect(requests[4]?.error).toBeNull();
  });

  it("R-L8: without a fallback model, overload is retried and then surfaced as model_error", async () => {
    const handle = await sims.start(() => ({ content: [{ type: "text", text: "never" }] }));
    handle.sim.setFaults({ schedule: [{ kind: "529", from: 1, to: Number.POSITIVE_INFINITY }] });
    const { terminal } = await collect(
      query(simParams(handle, { retry: { maxRetries: 4, baseDelayMs: 1 } })),
    );
    expect(terminal.reason).toBe("model_error");
    expect(handle.messageRequests()).toHaveLength(5);
  });

  it("R-L8/R-L12: messages of the abandoned attempt are answered and tombstoned", async () => {
    const primary = scriptedCallModel([
      { content: [{ type: "tool_use", name: "Probe", input: {}, id: "toolu_lost" }] },
    ]);
    const fallback = scriptedCallModel([{ content: [{ type: "text", text: "fine" }] }]);
    const callModel: QueryDeps["callModel"] = async function* (request) {
      if (request.model === "primary") {
        yield* primary(request);
        throw new FallbackTriggeredError("primary", 3);
      }
      yield* fallback(request);
    };
    const { events, terminal } = await collect(
      query({
        messages: [createUserMessage("go")],
        systemPrompt: "test",
        toolUseContext: testContext({ model: "primary", tools: [testTool({ name: "Probe" })] }),
        querySource: "sdk",
        fallbackModels: ["secondary"],
        deps: { callModel },
      }),
    );
    expect(terminal.reason).toBe("completed");
    const lost = events.find((event) => event.type === "assistant" && event.message.model === "primary");
    const orphanResult = events.find(
      (event) => event.type === "user" && JSON.stringify(event).includes("toolu_lost"),
    );
    if (lost?.type !== "assistant" || orphanResult?.type !== "user") throw new Error("missing events");
    const tombstones = events.flatMap((event) => (event.type === "tombstone" ? [event.uuid] : []));
    expect(tombstones).toEqual([lost.uuid, orphanResult.uuid]);
    expect(JSON.stringify(terminal.messages)).not.toContain("toolu_lost");
    expect(fallback.requests[0]?.model).toBe("secondary");
  });
});

describe("model client retries", () => {
  it.each(["mid_stream_error", "drop"] as const)(
    "a %s is retried (the SDK does not) and the run completes",
    async (kind) => {
      const handle = await sims.start(() => ({
        content: [{ type: "text", text: "Hello there, this is a reply." }],
      }));
      handle.sim.setFaults({ schedule: [{ kind, from: 1, to: 1 }] });
      const { events, terminal } = await collect(query(simParams(handle)));
      expect(terminal.reason).toBe("completed");
      expect(handle.messageRequests()).toHaveLength(2);
      expect(events.filter((event) => event.type === "api_retry")).toHaveLength(1);
      expect(terminal.messages.filter((message) => message.type === "assistant")).toHaveLength(1);
    },
  );

  it("R-R11: a 429 is retried after its retry-after — a wait beyond the backoff step (5 ms here) is waited whole, in one pause", async () => {
    const handle = await sims.start(() => ({ content: [{ type: "text", text: "ok" }] }));
    handle.sim.setFaults({ schedule: [{ kind: "429", from: 1, to: 1 }] });
    const { events, terminal } = await collect(query(simParams(handle)));
    expect(terminal.reason).toBe("completed");
    const retry = events.find((event) => event.type === "api_retry");
    // The simulator's 429 says retry-after: 1 (seconds).
    expect(retry).toMatchObject({ attempt: 1, delayMs: 1000 });
    expect(handle.messageRequests()).toHaveLength(2);
  });
});
