import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAssistantMessage, createUserMessage, syntheticApiMessage } from "./create-message.js";
import type { AssistantMessage, UserMessage } from "./messages.js";
import { query } from "./query.js";
import type { QueryDeps } from "./query-deps.js";
import { oversizedImage, snippingPipeline } from "./test-support/pipelines.js";
import { assertHistoryAccepted, simParams, useSimulator, WINDOW_30K } from "./test-support/sim-harness.js";
import { collect, scriptedCallModel, testContext, testTool } from "./testing/index.js";

const sims = useSimulator();

const toolTurn = (name: string, input: Record<string, unknown> = {}) => ({
  content: [
    { type: "text" as const, text: `Using ${name}.` },
    { type: "tool_use" as const, name, input },
  ],
});
const textTurn = (text: string) => ({ content: [{ type: "text" as const, text }] });
/** R-C7 hard limit of this window: 30,000 − min(8,000, 20,000) − 3,000 = 19,000 tokens. */
const window30k = WINDOW_30K;

describe("R-L6: every terminal reason, against the simulator", () => {
  it("R-L19: max_turns ends the run after maxTurns model calls", async () => {
    const handle = await sims.start(() => toolTurn("Probe"));
    const { terminal } = await collect(
      query(simParams(handle, { tools: [testTool({ name: "Probe" })], maxTurns: 2 })),
    );
    expect(terminal.reason).toBe("max_turns");
    expect(handle.messageRequests()).toHaveLength(2);
    expect(terminal.turnCount).toBe(3);
    await assertHistoryAccepted(handle, terminal.messages);
  });

  it("R-L6 blocking_limit: over the hard limit with auto-compact off, no API call is made", async () => {
    const handle = await sims.start([textTurn("never")]);
    const { terminal } = await collect(
      query(
        simParams(handle, {
          prompt: "word ".repeat(30_000),
          autoCompactEnabled: false,
          modelOverrides: [window30k],
        }),
      ),
    );
    expect(terminal.reason).toBe("blocking_limit");
    expect(handle.messageRequests()).toHaveLength(0);
  });

  it("R-C7/R-C8: the hard-limit check uses the pipeline's token count, not the stale usage", async () => {
    const handle = await sims.start([textTurn("answered")]);
    // The previous response counted the whole (then unsnipped) history: 25,000 tokens.
    const reply = syntheticApiMessage(
      "claude-sonnet-4-6",
      [{ type: "text", text: "Read it all.", citations: null }],
      "end_turn",
    );
    const previous = createAssistantMessage({
      ...reply,
      usage: { ...reply.usage, input_tokens: 24_990, output_tokens: 10 },
    });
    const pipeline = snippingPipeline();
    const { terminal } = await collect(
      query({
        ...simParams(handle, {
          autoCompactEnabled: false,
          contextPipeline: pipeline,
          modelOverrides: [window30k],
        }),
        messages: [createUserMessage("word ".repeat(20_000)), previous, createUserMessage("And now?")],
      }),
    );
    // tokenCountWithEstimation still says ≥ 25,000 > 19,000 (30,000 − 8,000 − 3,000) after the snip.
    expect(terminal.reason).toBe("completed");
    expect(handle.messageRequests()).toHaveLength(1);
    expect(handle.messageRequests()[0]?.rawBody).toContain("[earlier messages snipped]");
  });

  it("R-L3: a compact querySource is exempt from the blocking limit", async () => {
    const handle = await sims.start([textTurn("summary")]);
    const { terminal } = await collect(
      query(
        simParams(handle, {
          prompt: "word ".repeat(30_000),
          autoCompactEnabled: false,
          querySource: "compact",
          modelOverrides: [window30k],
        }),
      ),
    );
    expect(terminal.reason).toBe("completed");
    expect(handle.messageRequests()).toHaveLength(1);
  });

  it("R-L6 prompt_too_long: the simulator's 413-style error is surfaced once recovery is exhausted", async () => {
    const handle = await sims.start([textTurn("never")]);
    const { events, terminal } = await collect(
      query(simParams(handle, { model: "tiny-window", prompt: "word ".repeat(3_000) })),
    );
    expect(terminal.reason).toBe("prompt_too_long");
    expect(terminal.error?.message).toMatch(/prompt is too long/);
    const errors = events.filter((event) => event.type === "assistant" && event.apiError);
    expect(errors).toHaveLength(1);
  });

  it("R-L6 model_error: an API error that survives the retries", async () => {
    const handle = await sims.start([textTurn("never")]);
    handle.sim.setFaults({ schedule: [{ kind: "500", from: 1, to: Number.POSITIVE_INFINITY }] });
    const { events, terminal } = await collect(
      query(simParams(handle, { retry: { maxRetries: 2, baseDelayMs: 1 } })),
    );
    expect(terminal.reason).toBe("model_error");
    expect(handle.messageRequests()).toHaveLength(3);
    expect(events.filter((event) => event.type === "api_retry")).toHaveLength(2);
  });

  it("R-L6 image_error: the simulator's 400 for an image over 5 MB is withheld, then surfaced", async () => {
    const handle = await sims.start([textTurn("never")]);
    const { events, terminal } = await collect(
      query({
        ...simParams(handle),
        messages: [createUserMessage([oversizedImage(), { type: "text", text: "look" }])],
      }),
    );
    expect(terminal.reason).toBe("image_error");
    expect(terminal.error?.message).toMatch(/image exceeds 5 MB maximum: \d+ bytes > 5242880 bytes/);
    expect(handle.messageRequests()).toHaveLength(1);
    // R-L9: shown once, after recovery (none here: the passthrough pipeline cannot compact).
    expect(events.filter((event) => event.type === "assistant" && event.apiError)).toHaveLength(1);
  });

  it("R-L6 image_error: a request the API refuses as too large (413) is withheld as a media error, then surfaced as image_error in Claude Code's words — not prompt_too_long (claude-cli scenario api-error-too-large)", async () => {
    const handle = await sims.start([textTurn("never")]);
    handle.sim.setFaults({ schedule: [{ kind: "413", from: 1, to: Number.POSITIVE_INFINITY }] });
    const { events, terminal } = await collect(query(simParams(handle)));
    expect(terminal.reason).toBe("image_error");
    const errors = events.filter((event) => event.type === "assistant" && event.apiError);
    expect(errors).toHaveLength(1);
    expect(JSON.stringify(errors[0])).toContain("Request too large (max 32MB).");
    expect(handle.messageRequests()).toHaveLength(1);
  });

  it("R-L6 stop_hook_prevented", async () => {
    const handle = await sims.start([textTurn("finished")]);
    const { terminal } = await collect(
      query(
        simParams(handle, {
          hooks: { stop: [async () => ({ preventContinuation: true, stopReason: "policy says stop" })] },
        }),
      ),
    );
    expect(terminal.reason).toBe("stop_hook_prevented");
    expect(terminal.error?.message).toBe("policy says stop");
  });

  it("R-L6 hook_stopped: a PreToolUse hook with continue:false ends the loop after the results", async () => {
    const handle = await sims.start([toolTurn("Probe"), textTurn("never")]);
    const calls: string[] = [];
    const { terminal } = await collect(
      query(
        simParams(handle, {
          tools: [
            testTool({
              name: "Probe",
              call: async () => {
                calls.push("called");
                return { content: "ran" };
              },
            }),
          ],
          hooks: { preToolUse: [async () => ({ continue: false, stopReason: "frozen" })] },
        }),
      ),
    );
    expect(terminal.reason).toBe("hook_stopped");
    expect(calls).toEqual([]);
    expect(handle.messageRequests()).toHaveLength(1);
    await assertHistoryAccepted(handle, terminal.messages);
  });

  it("R-L16 aborted_streaming: Ctrl+C mid-stream leaves a history the simulator accepts", async () => {
    const handle = await sims.start([
      {
        content: [
          { type: "text", text: "a long answer ".repeat(40) },
          { type: "tool_use", name: "Probe", input: {} },
        ],
      },
    ]);
    handle.sim.setFaults({ schedule: [{ kind: "slow", from: 1, to: 1, slowMs: 20 }] });
    const params = simParams(handle, { tools: [testTool({ name: "Probe" })] });
    const generator = query(params);
    const events = [];
    let next = await generator.next();
    while (!next.done) {
      events.push(next.value);
      if (next.value.type === "stream_event" && next.value.event.type === "content_block_delta") {
        params.toolUseContext.abortController.abort();
      }
      next = await generator.next();
    }
    const terminal = next.value;
    expect(terminal.reason).toBe("aborted_streaming");
    const notice = terminal.messages.at(-1) as UserMessage;
    expect(notice.interrupt).toEqual({ toolUse: false });
    await assertHistoryAccepted(handle, terminal.messages);
  });

  it("R-L16/R-L12: Ctrl+C after a streamed tool started, before message_stop, leaves a valid history", async () => {
    const handle = await sims.start([
      {
        content: [
          { type: "tool_use", name: "Probe", input: {} },
          { type: "text", text: "still talking ".repeat(40) },
        ],
      },
    ]);
    handle.sim.setFaults({ schedule: [{ kind: "slow", from: 1, to: 1, slowMs: 10 }] });
    const started: string[] = [];
    const params = simParams(handle, {
      tools: [
        testTool({
          name: "Probe",
          call: async () => {
            started.push("probe");
            return { content: "probed" };
          },
        }),
      ],
    });
    const generator = query(params);
    let next = await generator.next();
    while (!next.done) {
      if (
        next.value.type === "stream_event" &&
        next.value.event.type === "content_block_start" &&
        next.value.event.index === 1
      ) {
        params.toolUseContext.abortController.abort();
      }
      next = await generator.next();
    }
    expect(next.value.reason).toBe("aborted_streaming");
    expect(started).toEqual(["probe"]);
    await assertHistoryAccepted(handle, next.value.messages);
  });

  it("R-L16 aborted_tools: Ctrl+C while a tool runs answers every tool_use and marks toolUse", async () => {
    const handle = await sims.start([
      {
        content: [
          { type: "tool_use", name: "Hang", input: {} },
          { type: "tool_use", name: "Later", input: {} },
        ],
      },
    ]);
    const context = testContext();
    const hang = testTool({
      name: "Hang",
      safe: false,
      call: async () => {
        context.abortController.abort();
        return new Promise(() => {}); // ignores the signal: the executor must not wait for it
      },
    });
    const later = testTool({ name: "Later", safe: false });
    const { terminal } = await collect(
      query({ ...simParams(handle), toolUseContext: { ...context, tools: [hang, later] } }),
    );
    expect(terminal.reason).toBe("aborted_tools");
    const notice = terminal.messages.at(-1) as UserMessage;
    expect(notice.interrupt).toEqual({ toolUse: true });
    // Claude Code's words: both calls rejected by the user, the started one said to have run in part (R-K2).
    const results = JSON.stringify(terminal.messages);
    expect(results.match(/The user doesn't want to proceed with this tool use/g)?.length).toBe(2);
    expect(results.match(/this call was stopped while running/g)?.length).toBe(1);
    expect(results.match(/User rejected tool use/g)?.length).toBe(2);
    await assertHistoryAccepted(handle, terminal.messages);
  });

  it("R-L16 aborted_tools: a stop that comes as the finished tool-use reply is handed out is a stop during tool use, as Claude Code's interrupt()", async () => {
    const handle = await sims.start([toolTurn("Slow")]);
    const context = testContext();
    const slow = testTool({
      name: "Slow",
      safe: false,
      call: () => new Promise(() => {}),
    });
    const generator = query({ ...simParams(handle), toolUseContext: { ...context, tools: [slow] } });
    let next = await generator.next();
    while (!next.done) {
      // The program sees the tool call and interrupts (the Agent SDK's interrupt() on an assistant message).
      if (next.value.type === "assistant") context.abortController.abort();
      next = await generator.next();
    }
    const terminal = next.value;
    expect(terminal.reason).toBe("aborted_tools");
    const notice = terminal.messages.at(-1) as UserMessage;
    expect(notice.interrupt).toEqual({ toolUse: true });
    await assertHistoryAccepted(handle, terminal.messages);
  });

  it("R-L16: a submit-interrupt (reason 'interrupt') adds no interrupt notice", async () => {
    const handle = await sims.start([toolTurn("Stop")]);
    const context = testContext();
    const stopper = testTool({
      name: "Stop",
      safe: false,
      call: async () => {
        context.abortController.abort("interrupt");
        return { content: "stopping" };
      },
    });
    const { terminal } = await collect(
      query({ ...simParams(handle), toolUseContext: { ...context, tools: [stopper] } }),
    );
    expect(terminal.reason).toBe("aborted_tools");
    expect(terminal.messages.some((message) => message.type === "user" && message.interrupt)).toBe(false);
    await assertHistoryAccepted(handle, terminal.messages);
  });

  it("R-L12: a model crash after a tool_use still answers it (model-crash site)", async () => {
    const handle = await sims.start([textTurn("ok")]);
    const callModel = scriptedCallModel([
      { content: [{ type: "tool_use", name: "Probe", input: {}, id: "toolu_crash_1" }] },
      { throw: new Error("socket hang up") },
    ]);
    let calls = 0;
    const crashing: QueryDeps["callModel"] = async function* (request) {
      calls++;
      for await (const event of callModel(request)) yield event;
      if (calls === 1) throw new Error("model crashed after the tool_use");
    };
    const { terminal } = await collect(
      query({
        ...simParams(handle, { tools: [testTool({ name: "Probe" })] }),
        deps: { callModel: crashing },
      }),
    );
    expect(terminal.reason).toBe("model_error");
    const assistant = terminal.messages.find((message) => message.type === "assistant") as AssistantMessage;
    expect(assistant.message.content[0]?.type).toBe("tool_use");
    await assertHistoryAccepted(handle, terminal.messages);
  });
});

describe("R-L6 completed", () => {
  it("R-L6: plain completion and usage totals", async () => {
    const handle = await sims.start([textTurn("hello")]);
    const { terminal } = await collect(query(simParams(handle)));
    expect(terminal.reason).toBe("completed");
    expect(terminal.usage.apiCalls).toBe(1);
    expect(terminal.usage.outputTokens).toBeGreaterThan(0);
    expect(terminal.usage.inputTokens).toBe(handle.messageRequests()[0]?.usage?.input_tokens);
  });

  it("R-T1: tool input schema reaches the API as JSON schema", async () => {
    const handle = await sims.start([textTurn("hello")]);
    const tool = testTool({ name: "Typed", schema: z.object({ path: z.string().describe("where") }) });
    await collect(query(simParams(handle, { tools: [tool] })));
    const body = JSON.parse(handle.messageRequests()[0]?.rawBody ?? "{}");
    expect(body.tools[0].input_schema.properties.path).toEqual({ type: "string", description: "where" });
  });
});
