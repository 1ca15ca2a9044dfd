import Anthropic from "@anthropic-ai/sdk";
import {
  type LoopEvent,
  type Message,
  type ModelInfo,
  query,
  tokenCountWithEstimation,
} from "@forkloop/loop-core";
import { testTool } from "@forkloop/loop-core/testing";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { afterEach, describe, expect, it } from "vitest";
import type { CompactionEvent } from "./events.js";
import { createContextPipeline } from "./pipeline.js";
import { createHistory, createScriptedCompactRunner, mainAgentParams } from "./testing/index.js";

/**
 * R-C3 context collapse in the real pipeline: loop-core's query() with createContextPipeline, the
 * simulator over real HTTP and the official SDK. The compact runner refuses every request, so a
 * test that passes did not get there by compacting.
 */

const open: Simulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((sim) => sim.close()));
});

/** 24k window, 4k output: auto-compact at 7,000 tokens (R-C7). */
const NARROW: ModelInfo = {
  id: "sim-collapse",
  contextWindow: 24_000,
  maxOutputTokens: 4_000,
  inputPricePerMTok: 3,
  outputPricePerMTok: 15,
};

async function start(serverWindow: number) {
  const sim = await startSimulator({
    brain: () => ({ content: [{ type: "text", text: "Fits now." }] }),
    models: [
      {
        id: NARROW.id,
        aliases: [],
        contextWindow: serverWindow,
        maxOutputTokens: NARROW.maxOutputTokens,
        inputPricePerMTok: 3,
        outputPricePerMTok: 15,
        minCacheableTokens: 1024,
        thinking: { enabled: true, adaptive: false, disabled: true },
      },
    ],
  });
  open.push(sim);
  return { sim, client: new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 }) };
}

/** Three finished exchanges (a question, three Read rounds, an answer) and a new question. */
function threeExchanges(): Message[] {
  const history = createHistory();
  for (let i = 0; i < 3; i++) {
    history.user(`question ${i}`);
    for (let j = 0; j < 3; j++)
      history.toolCall("Read", { file_path: `/q${i}/f${j}.ts` }, `CONTENT-q${i}-f${j} `.repeat(220));
    history.answer(`answer ${i}: the module is done`);
  }
  history.user("the real question");
  return history.messages;
}

async function run(client: Anthropic, clientModel: ModelInfo) {
  const runner = createScriptedCompactRunner([new Error("this test must not compact")]);
  const compactions: CompactionEvent[] = [];
  const pipeline = createContextPipeline({
    runCompact: runner,
    modelOverrides: [clientModel],
    // Microcompact would clear the same tool results first; this test is about collapse alone.
    keepRecentToolResults: 1_000,
    onEvent: (event) => compactions.push(event),
  });
  const generator = query({
    ...mainAgentParams({
      client,
      model: clientModel.id,
      tools: [testTool({ name: "Read" })],
      task: "",
      systemPrompt: "You are terse.",
    }),
    messages: threeExchanges(),
    contextPipeline: pipeline,
    modelOverrides: [clientModel],
    recordSnapshots: true,
  });
  const events: LoopEvent[] = [];
  let next = await generator.next();
  while (!next.done) {
    events.push(next.value);
    next = await generator.next();
  }
  return { events, terminal: next.value, compactions, compactRequests: runner.requests };
}

const transitions = (events: readonly LoopEvent[]) =>
  events.flatMap((event) => (event.type === "state_snapshot" ? [event.transition] : []));
/** The tool results a request body still holds, by their markers. */
const markers = (body: string) => [...new Set(body.match(/CONTENT-q\d-f\d/g) ?? [])];
const messageBodies = (sim: Simulator) =>
  sim.requests().flatMap((record) => (record.path === "/v1/messages" ? [record.rawBody] : []));

describe("R-C3 context collapse through the real pipeline", () => {
  it("R-C3: over the auto-compact line, collapse digests the finished exchanges before the tail — no compact request, and the request sent no longer holds its tool results", async () => {
    expect(tokenCountWithEstimation(threeExchanges())).toBeGreaterThan(7_000);
    const { sim, client } = await start(24_000);
    const { terminal, compactions, compactRequests } = await run(client, NARROW);

    expect(terminal.reason).toBe("completed");
    expect(compactRequests).toHaveLength(0);
    expect(compactions).toContainEqual(expect.objectContaining({ type: "collapsed", drained: false }));
    const [body, ...rest] = messageBodies(sim);
    expect(rest).toHaveLength(0);
    // The digest names the exchange's calls; its tool results and tool_use blocks are gone.
    expect(body).toContain("Read /q0/f1.ts");
    expect(body).toContain("answer 0: the module is done");
    // The newest exchange is in the protected tail, verbatim; the older ones' results are gone.
    expect(markers(body!)).toEqual(["CONTENT-q2-f0", "CONTENT-q2-f1", "CONTENT-q2-f2"]);
  });

  it("R-C3 collapse_drain_retry: the API says prompt is too long below the client's lines → drainCollapse digests the finished exchanges before the last one and the retry fits, without a compact request", async () => {
    // The client believes in a 200k window (nothing to do before the call); the server has 5k.
    const wide: ModelInfo = { ...NARROW, contextWindow: 200_000 };
    const { sim, client } = await start(5_000);
    const { events, terminal, compactions, compactRequests } = await run(client, wide);

    expect(terminal.reason).toBe("completed");
    expect(transitions(events)).toEqual([undefined, "collapse_drain_retry"]);
    expect(compactRequests).toHaveLength(0);
    expect(compactions).toEqual([expect.objectContaining({ type: "collapsed", drained: true })]);
    const bodies = messageBodies(sim);
    expect(bodies).toHaveLength(2);
    expect(markers(bodies[0]!)).toHaveLength(9);
    // Both finished exchanges before the last one are digests now; the last one is the tail.
    expect(markers(bodies[1]!)).toEqual(["CONTENT-q2-f0", "CONTENT-q2-f1", "CONTENT-q2-f2"]);
    expect(bodies[1]).toContain("Read /q1/f2.ts");
    expect(bodies[1]).toContain("answer 1: the module is done");
    // R-L9: the prompt-too-long error was withheld, never shown.
    expect(events.some((event) => event.type === "assistant" && event.apiError)).toBe(false);
  });
});
