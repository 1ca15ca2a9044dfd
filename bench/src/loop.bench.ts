/**
 * loop-core figures (issue 3 "Done when"):
 * 1. Loop CPU per iteration with 10 / 100 / 1,000 history messages. The model is an in-process
 *    scripted client that still builds and serializes the exact request body (the client-side CPU
 *    of a real call); no HTTP, no waits, so only the loop's own work is timed.
 * 2. Latency of a turn with three slow read-only tools on the simulator (real HTTP, official SDK,
 *    a paced stream): the streaming executor (tools start at their content_block_stop) vs running
 *    the tools after message_stop. Measured side by side in one run; the ratio is streaming/after.
 *    Two duration profiles, because the gain depends on them: with equal durations the last tool
 *    still starts at message_stop, so only unequal ones show what the overlap is worth.
 */
import Anthropic from "@anthropic-ai/sdk";
import {
  buildModelRequestBody,
  createAssistantMessage,
  createUserMessage,
  type Message,
  type QueryDeps,
  query,
} from "@forkloop/loop-core";
import { scriptedCallModel, testContext, testTool } from "@forkloop/loop-core/testing";
import { startSimulator } from "@forkloop/sim";
import { type BenchResult, compare, percentile, timeRuns } from "./harness.js";

const ITERATIONS_PER_RUN = 10;
const PATHS = ["src/a.ts", "src/b.ts", "src/c.ts"];

function history(size: number): Message[] {
  const messages: Message[] = [];
  for (let index = 0; index < size; index++) {
    const text = `message ${index}: ${"lorem ipsum dolor sit amet ".repeat(8)}`;
    messages.push(
      index % 2 === 0
        ? createUserMessage(text)
        : createAssistantMessage({
            id: `msg_${index}`,
            type: "message",
            role: "assistant",
            model: "claude-sonnet-4-6",
            content: [{ type: "text", text, citations: null }],
            stop_reason: "end_turn",
            stop_sequence: null,
            usage: { input_tokens: 100, output_tokens: 50 },
          } as never),
    );
  }
  messages.push(createUserMessage("Go on."));
  return messages;
}

/** One query of ITERATIONS_PER_RUN tool turns and a final answer; returns its wall time in ms. */
async function loopRun(messages: readonly Message[]): Promise<void> {
  const scripted = scriptedCallModel((_request, index) =>
    index < ITERATIONS_PER_RUN
      ? { content: [{ type: "tool_use", name: "Noop", input: { index } }] }
      : { content: [{ type: "text", text: "done" }] },
  );
  const callModel: QueryDeps["callModel"] = (request) => {
    // The client-side part of a real call: build and serialize the request body.
    JSON.stringify(buildModelRequestBody(request));
    return scripted(request);
  };
  const generator = query({
    messages,
    systemPrompt: "You are a benchmark.",
    toolUseContext: testContext({ tools: [testTool({ name: "Noop" })] }),
    querySource: "sdk",
    deps: { callModel },
  });
  for (let next = await generator.next(); !next.done; next = await generator.next()) {
    // drain
  }
}

async function loopCpu(): Promise<BenchResult[]> {
  const perIteration = new Map<number, number>();
  for (const size of [10, 100, 1_000]) {
    const messages = history(size);
    const samples = await timeRuns(() => loopRun(messages), size >= 1_000 ? 15 : 40, 3);
    perIteration.set(size, percentile(samples, 50) / (ITERATIONS_PER_RUN + 1));
  }
  const ms = (size: number) => perIteration.get(size) ?? Number.NaN;
  return [
    { name: "loop CPU per iteration, 10 messages", metric: "p50", value: ms(10), unit: "ms" },
    { name: "loop CPU per iteration, 100 messages", metric: "p50", value: ms(100), unit: "ms" },
    { name: "loop CPU per iteration, 1,000 messages", metric: "p50", value: ms(1_000), unit: "ms" },
    compare(
      "loop CPU growth with history (lower is better)",
      "p50 per iteration",
      "ms",
      { label: "10 msgs", value: ms(10) },
      { label: "1,000 msgs", value: ms(1_000) },
      "in-process scripted model; includes building and serializing each request",
    ),
  ];
}

async function toolTurnLatency(durationsMs: readonly [number, number, number]): Promise<BenchResult[]> {
  const sim = await startSimulator({
    brain: (request) =>
      request.turnIndex === 0
        ? {
            content: [
              { type: "text", text: "I will read the three files in parallel to compare them." },
              ...PATHS.map((path) => ({
                type: "tool_use" as const,
                name: "SlowRead",
                input: { path, reason: `checking ${path} for the helper that parses the config file` },
              })),
            ],
          }
        : { content: [{ type: "text", text: "They agree." }] },
    latency: { default: { ttftMs: 100, prefillTokensPerSecond: 1_000_000, outputTokensPerSecond: 80 } },
  });
  try {
    const client = new Anthropic({ apiKey: "bench-key", baseURL: sim.url, maxRetries: 0 });
    const slowRead = testTool({
      name: "SlowRead",
      safe: true,
      call: (input) =>
        new Promise((resolve) =>
          setTimeout(
            () => resolve({ content: "file contents" }),
            durationsMs[PATHS.indexOf(String(input.path))],
          ),
        ),
    });
    const turn = (streaming: boolean) => async () => {
      const generator = query({
        messages: [createUserMessage("Compare the files.")],
        systemPrompt: "You are a benchmark.",
        toolUseContext: testContext({ tools: [slowRead] }),
        querySource: "sdk",
        client,
        streamingToolExecution: streaming,
      });
      // Turn latency: from the start until the next request starts (stream + tools).
      let requests = 0;
      for (let next = await generator.next(); !next.done; next = await generator.next()) {
        if (next.value.type === "request_start" && ++requests === 2) {
          await generator.return(undefined as never);
          break;
        }
      }
    };
    const after: number[] = [];
    const streamed: number[] = [];
    // Interleaved so both sides see the same machine state.
    for (let round = 0; round < 8; round++) {
      after.push(...(await timeRuns(turn(false), 1, round === 0 ? 1 : 0)));
      streamed.push(...(await timeRuns(turn(true), 1, round === 0 ? 1 : 0)));
    }
    return [
      compare(
        `turn with 3 slow read-only tools (${durationsMs.join("/")} ms): streaming executor vs after-stream (lower is better)`,
        "p50 turn latency",
        "ms",
        { label: "after message_stop", value: percentile(after, 50) },
        { label: "streaming executor", value: percentile(streamed, 50) },
        "simulator at 80 output tokens/s; the tool_use blocks end the message, ~400 ms apart",
      ),
    ];
  } finally {
    await sim.close();
  }
}

export async function run(): Promise<BenchResult[]> {
  return [
    ...(await loopCpu()),
    // Equal durations: the last tool starts at message_stop either way, so there is little to gain.
    ...(await toolTurnLatency([300, 300, 300])),
    // Earlier calls slower than later ones (e.g. a wide Grep, then two Reads): streaming overlaps them.
    ...(await toolTurnLatency([900, 600, 300])),
  ];
}
