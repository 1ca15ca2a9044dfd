import { describe, expect, it } from "vitest";
import { createUserMessage } from "./create-message.js";
import type { LoopEvent } from "./loop-events.js";
import { callModel } from "./model-client.js";
import { query } from "./query.js";
import {
  oversizedImage,
  recordingPipeline,
  shrinkToLastUser,
  withoutImages,
} from "./test-support/pipelines.js";
import { simParams, useSimulator } from "./test-support/sim-harness.js";
import { collect, testTool } from "./testing/index.js";

const sims = useSimulator();
const textTurn = (text: string) => ({ content: [{ type: "text" as const, text }] });
const transitions = (events: readonly LoopEvent[]) =>
  events.flatMap((event) => (event.type === "state_snapshot" ? [event.transition] : []));
const bigText = "word ".repeat(3_000);

describe("R-L7: every continue reason, against the simulator", () => {
  it("R-L15 stop_hook_blocking: blocking errors go back to the model, then it completes", async () => {
    const handle = await sims.start((request) =>
      textTurn(request.lastUserText?.includes("linter") ? "Fixed the lint." : "Done."),
    );
    const seen: boolean[] = [];
    const { events, terminal } = await collect(
      query(
        simParams(handle, {
          recordSnapshots: true,
          hooks: {
            stop: [
              async ({ stopHookActive }) => {
                seen.push(stopHookActive);
                return stopHookActive ? {} : { blockingErrors: ["linter still reports 3 errors"] };
              },
            ],
          },
        }),
      ),
    );
    expect(terminal.reason).toBe("completed");
    expect(transitions(events)).toEqual([undefined, "stop_hook_blocking"]);
    expect(handle.messageRequests()).toHaveLength(2);
    expect(handle.messageRequests()[1]?.rawBody).toContain("linter still reports 3 errors");
  });

  it("R-L14 token_budget_continuation: nudged while under 90%, stopped by diminishing returns", async () => {
    const handle = await sims.start(() => textTurn("A little more work."));
    const { events, terminal } = await collect(
      query(simParams(handle, { tokenBudget: 500_000, recordSnapshots: true })),
    );
    expect(terminal.reason).toBe("completed");
    // 1 call + 3 continuations; the 4th check sees two continuations in a row adding < 500 tokens.
    expect(handle.messageRequests()).toHaveLength(4);
    expect(transitions(events)).toEqual([
      undefined,
      "token_budget_continuation",
      "token_budget_continuation",
      "token_budget_continuation",
    ]);
    expect(handle.messageRequests()[1]?.rawBody).toMatch(/remaining/);
  });

  it("R-L14: a sub-agent never continues on a token budget", async () => {
    const handle = await sims.start(() => textTurn("Done."));
    const params = simParams(handle, { tokenBudget: 500_000 });
    const { terminal } = await collect(
      query({ ...params, toolUseContext: { ...params.toolUseContext, agentId: "agent-7" } }),
    );
    expect(terminal.reason).toBe("completed");
    expect(handle.messageRequests()).toHaveLength(1);
  });

  it("R-L10 max_output_tokens_escalate then max_output_tokens_recovery", async () => {
    const handle = await sims.start(() =>
      textTurn("A long answer that gets cut in the middle of a sentence."),
    );
    handle.sim.setFaults({ schedule: [{ kind: "max_tokens", from: 1, to: 2 }] });
    const { events, terminal } = await collect(query(simParams(handle, { recordSnapshots: true })));
    expect(terminal.reason).toBe("completed");
    expect(transitions(events)).toEqual([
      undefined,
      "max_output_tokens_escalate",
      "max_output_tokens_recovery",
    ]);
    const bodies = handle.messageRequests().map((record) => JSON.parse(record.rawBody));
    expect(bodies.map((body) => body.max_tokens)).toEqual([8_000, 64_000, 64_000]);
    expect(handle.messageRequests()[2]?.rawBody).toContain("Output token limit hit");
    // R-L9: the cut replies were withheld; only the recovered partial reply and the final one show.
    const cut = events.filter(
      (event) => event.type === "assistant" && event.message.stop_reason === "max_tokens",
    );
    expect(cut).toHaveLength(1);
  });

  it("R-C3 collapse_drain_retry: a withheld prompt-too-long is first answered by draining collapses", async () => {
    const handle = await sims.start(() => textTurn("Fits now."));
    const pipeline = recordingPipeline({ drainCollapse: async (input) => shrinkToLastUser(input) });
    const { events, terminal } = await collect(
      query({
        ...simParams(handle, { model: "tiny-window", recordSnapshots: true, contextPipeline: pipeline }),
        messages: [createUserMessage(bigText), createUserMessage("the real question")],
      }),
    );
    expect(terminal.reason).toBe("completed");
    expect(transitions(events)).toEqual([undefined, "collapse_drain_retry"]);
    expect(pipeline.log).not.toContain("reactiveCompact");
    // R-L9: the prompt-too-long error was never shown.
    expect(events.some((event) => event.type === "assistant" && event.apiError)).toBe(false);
  });

  it("R-C6 reactive_compact_retry: then a one-shot reactive compact", async () => {
    const handle = await sims.start(() => textTurn("Fits now."));
    const pipeline = recordingPipeline({ reactiveCompact: async (input) => shrinkToLastUser(input) });
    const { events, terminal } = await collect(
      query({
        ...simParams(handle, { model: "tiny-window", recordSnapshots: true, contextPipeline: pipeline }),
        messages: [createUserMessage(bigText), createUserMessage("the real question")],
      }),
    );
    expect(terminal.reason).toBe("completed");
    expect(transitions(events)).toEqual([undefined, "reactive_compact_retry"]);
    expect(pipeline.log.filter((stage) => stage === "drainCollapse")).toHaveLength(1);
  });
});

describe("R-L11: death-spiral guards, proven by counting the simulator's API calls", () => {
  it("R-L11: a stop hook that always blocks costs exactly one retry", async () => {
    const handle = await sims.start(() => textTurn("Done."));
    const { terminal } = await collect(
      query(simParams(handle, { hooks: { stop: [async () => ({ blockingErrors: ["still failing"] })] } })),
    );
    expect(terminal.reason).toBe("completed");
    expect(handle.messageRequests()).toHaveLength(2);
  });

  it("R-L11: a model that always hits max_tokens: 1 + escalation + 3 recoveries, then stop", async () => {
    const handle = await sims.start(() => textTurn("An answer that is always cut short by the simulator."));
    handle.sim.setFaults({ schedule: [{ kind: "max_tokens", from: 1, to: Number.POSITIVE_INFINITY }] });
    const { terminal } = await collect(query(simParams(handle)));
    expect(terminal.reason).toBe("model_error");
    expect(terminal.error?.type).toBe("max_output_tokens");
    expect(handle.messageRequests()).toHaveLength(5);
  });

  it("R-L10, R-K2: after the last recovery the cut reply is followed by an API-error message in Claude Code's words, which the turn ends on", async () => {
    const handle = await sims.start(() => textTurn("An answer that is always cut short by the simulator."));
    handle.sim.setFaults({ schedule: [{ kind: "max_tokens", from: 1, to: Number.POSITIVE_INFINITY }] });
    const { terminal, events } = await collect(query(simParams(handle)));
    const [cut, notice] = events.filter((event) => event.type === "assistant").slice(-2);
    expect(cut?.type === "assistant" && cut.message.stop_reason).toBe("max_tokens");
    const message = `Claude's response exceeded the ${64_000} output token maximum. To configure this behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable.`;
    expect(notice).toMatchObject({
      apiError: { status: null, type: "max_output_tokens", message },
      message: { content: [{ type: "text", text: `API Error: ${message}` }] },
    });
    expect(terminal.error).toEqual({ status: null, type: "max_output_tokens", message });
    expect(terminal.messages.at(-1)).toBe(notice);
  });

  it("R-L11: a reactive compact that does not help runs once, then prompt_too_long", async () => {
    const handle = await sims.start(() => textTurn("never"));
    const pipeline = recordingPipeline({
      reactiveCompact: async (input) => ({ ...shrinkToLastUser(input), messages: input.messages }),
    });
    const { terminal } = await collect(
      query({
        ...simParams(handle, { model: "tiny-window", contextPipeline: pipeline }),
        messages: [createUserMessage(bigText)],
      }),
    );
    expect(terminal.reason).toBe("prompt_too_long");
    expect(pipeline.log.filter((stage) => stage === "reactiveCompact")).toHaveLength(1);
    expect(handle.messageRequests()).toHaveLength(2);
  });

  it("R-L11: the reactive-compact guard survives a stop-hook retry (not reset)", async () => {
    const handle = await sims.start(() => textTurn("ok"));
    const pipeline = recordingPipeline({ reactiveCompact: async (input) => shrinkToLastUser(input) });
    const { terminal } = await collect(
      query({
        ...simParams(handle, {
          model: "tiny-window",
          contextPipeline: pipeline,
          // The hook's feedback overflows the tiny window again.
          hooks: { stop: [async () => ({ blockingErrors: [bigText] })] },
        }),
        messages: [createUserMessage(bigText), createUserMessage("q")],
      }),
    );
    expect(terminal.reason).toBe("prompt_too_long");
    expect(pipeline.log.filter((stage) => stage === "reactiveCompact")).toHaveLength(1);
    // too long → compact → ok → hook blocks → too long → (no second compact) surface.
    expect(handle.messageRequests()).toHaveLength(3);
  });

  it("R-L10: reactive compact runs once per error kind: an image fix does not use up the prompt-too-long one", async () => {
    const handle = await sims.start(() => textTurn("Fits now."));
    // Drops images when there are any (the media error's fix), else shrinks the history.
    const pipeline = recordingPipeline({
      reactiveCompact: async (input) =>
        input.messages.some((message) => JSON.stringify(message).includes('"image"'))
          ? { ...shrinkToLastUser(input), messages: input.messages.map(withoutImages) }
          : shrinkToLastUser(input),
    });
    const { events, terminal } = await collect(
      query({
        ...simParams(handle, { model: "tiny-window", recordSnapshots: true, contextPipeline: pipeline }),
        messages: [
          createUserMessage([oversizedImage(), { type: "text", text: bigText }]),
          createUserMessage("the real question"),
        ],
      }),
    );
    expect(terminal.reason).toBe("completed");
    // image over 5 MB → compact (media) → prompt too long → drain (nothing) → compact (prompt) → ok.
    expect(transitions(events)).toEqual([undefined, "reactive_compact_retry", "reactive_compact_retry"]);
    const errors = handle.messageRequests().map((record) => record.error?.message ?? null);
    expect(errors[0]).toMatch(/image exceeds 5 MB/);
    expect(errors[1]).toMatch(/prompt is too long/);
    expect(errors[2]).toBeNull();
    expect(pipeline.log.filter((stage) => stage === "reactiveCompact")).toHaveLength(2);
  });

  it("R-L11: a reactive compact that does not fix an image runs once, then image_error", async () => {
    const handle = await sims.start(() => textTurn("never"));
    const pipeline = recordingPipeline({
      reactiveCompact: async (input) => ({ ...shrinkToLastUser(input), messages: input.messages }),
    });
    const { terminal } = await collect(
      query({
        ...simParams(handle, { contextPipeline: pipeline }),
        messages: [createUserMessage([oversizedImage(), { type: "text", text: "look" }])],
      }),
    );
    expect(terminal.reason).toBe("image_error");
    expect(pipeline.log.filter((stage) => stage === "reactiveCompact")).toHaveLength(1);
    expect(handle.messageRequests()).toHaveLength(2);
  });

  it("R-L11: no stop hooks after an API error", async () => {
    const handle = await sims.start(() => textTurn("never"));
    handle.sim.setFaults({ schedule: [{ kind: "400", from: 1, to: 1 }] });
    let hookRuns = 0;
    const { terminal } = await collect(
      query(
        simParams(handle, {
          hooks: {
            stop: [
              async () => {
                hookRuns++;
                return { blockingErrors: ["retry!"] };
              },
            ],
          },
        }),
      ),
    );
    expect(terminal.reason).toBe("model_error");
    expect(hookRuns).toBe(0);
    expect(handle.messageRequests()).toHaveLength(1);
  });

  it("R-C4/R-L11: a permanently failing auto-compact is tried 3 times, not once per turn", async () => {
    const handle = await sims.start((request) =>
      request.querySource === "compact"
        ? ({ content: [], fault: "500" } as never)
        : { content: [{ type: "tool_use", name: "Probe", input: {} }] },
    );
    const compactor = recordingPipeline({
      autocompact: async (input) => {
        let failed = false;
        for await (const event of callModel({
          client: handle.client,
          model: input.model,
          systemPrompt: "Summarize.",
          tools: [],
          messages: [createUserMessage("summarize the conversation")],
          maxOutputTokens: 1_000,
          querySource: "compact",
          signal: input.signal,
          fallbackAvailable: false,
          retry: { maxRetries: 0 },
          parentUuid: null,
          uuid: () => crypto.randomUUID(),
        })) {
          if (event.type === "assistant" && event.apiError) failed = true;
        }
        const consecutiveFailures = failed ? input.tracking.consecutiveFailures + 1 : 0;
        return {
          messages: input.messages,
          boundaries: [],
          tokensFreed: 0,
          tracking: { ...input.tracking, consecutiveFailures },
        };
      },
    });
    const { terminal } = await collect(
      query(
        simParams(handle, { tools: [testTool({ name: "Probe" })], maxTurns: 6, contextPipeline: compactor }),
      ),
    );
    expect(terminal.reason).toBe("max_turns");
    const compactCalls = handle.messageRequests().filter((record) => record.querySource === "compact");
    expect(compactCalls).toHaveLength(3);
    expect(handle.messageRequests().filter((record) => record.querySource === "sdk")).toHaveLength(6);
  });
});

describe("§4: context management order", () => {
  it("R-C0..R-C4: budgetAndSnip → microcompact → collapse → autocompact before every call", async () => {
    const handle = await sims.start((request) =>
      request.turnIndex === 0
        ? { content: [{ type: "tool_use", name: "Probe", input: {} }] }
        : textTurn("done"),
    );
    const pipeline = recordingPipeline();
    await collect(
      query(simParams(handle, { tools: [testTool({ name: "Probe" })], contextPipeline: pipeline })),
    );
    expect(pipeline.log).toEqual([
      ...["budgetAndSnip", "microcompact", "collapse", "autocompact"],
      ...["budgetAndSnip", "microcompact", "collapse", "autocompact"],
    ]);
  });

  it("R-L13: deps.microcompact and deps.autocompact replace the pipeline's stages", async () => {
    const handle = await sims.start(() => textTurn("done"));
    const pipeline = recordingPipeline();
    const used: string[] = [];
    await collect(
      query(
        simParams(handle, {
          contextPipeline: pipeline,
          deps: {
            microcompact: async (input) => {
              used.push("micro");
              return pipeline.microcompact(input);
            },
            autocompact: async (input) => {
              used.push("auto");
              return pipeline.autocompact(input);
            },
            uuid: () => `uuid-${used.push("uuid")}`,
          },
        }),
      ),
    );
    expect(used.filter((entry) => entry !== "uuid")).toEqual(["micro", "auto"]);
    expect(used.filter((entry) => entry === "uuid").length).toBeGreaterThan(0);
  });
});
