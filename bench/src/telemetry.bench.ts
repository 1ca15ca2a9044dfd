/**
 * R-V5: what telemetry costs the loop. The loop benchmark's run (an in-process scripted model
 * that still builds and serializes each request body, 10 tool turns and an answer; no HTTP) is
 * driven four ways, interleaved so each sees the same machine: loop-core's query() alone; through
 * a pass-through generator as the agent runner's drive was before telemetry (the baseline of the
 * "off" figure); through the agent runner's recorder with telemetry off (the default: what every session and sub-agent
 * runs); and with telemetry on, recording every span and metric point into a sink that keeps
 * them (the observer's own work; the OTLP export runs batched on the SDK's timer and is not in
 * the loop). Process CPU per iteration, p50.
 */
import * as loopCore from "@forkloop/loop-core";
import { type Message, query } from "@forkloop/loop-core";
import { scriptedCallModel, testContext, testTool } from "@forkloop/loop-core/testing";
import { AgentRecorder, TEST_MODEL, testProfile } from "@forkloop/orchestrator/testing";
import { type BenchResult, compare, cpuRuns, percentile } from "./harness.js";
import { history } from "./loop-history.js";

const TURNS = 10;
const SAMPLES = 100;
const RUNS_PER_SAMPLE = 4;

function params(messages: readonly Message[]): loopCore.QueryParams {
  const scripted = scriptedCallModel((_request, index) =>
    index < TURNS
      ? { content: [{ type: "tool_use", name: "Noop", input: { index } }] }
      : { content: [{ type: "text", text: "done" }] },
  );
  return {
    messages,
    systemPrompt: "You are a benchmark.",
    toolUseContext: testContext({ tools: [testTool({ name: "Noop" })] }),
    querySource: "sdk",
    deps: {
      callModel: (request) => {
        JSON.stringify(loopCore.buildModelRequestBody(request));
        return scripted(request);
      },
    },
  };
}

async function drain(generator: AsyncGenerator<unknown, unknown>): Promise<void> {
  for (let next = await generator.next(); !next.done; next = await generator.next()) {
    // drain
  }
}

const profile = testProfile();
let kept = 0;
const sink = {
  span: () => {
    kept++;
  },
  metric: () => {
    kept++;
  },
};

/** The agent runner's drive as it was before telemetry: every event passed through, priced. */
async function* passThrough(messages: readonly Message[]) {
  let cost = 0;
  const generator = query(params(messages));
  let next = await generator.next();
  while (!next.done) {
    if (next.value.type === "assistant") cost += 0;
    yield next.value;
    next = await generator.next();
  }
  return { terminal: next.value, costUsd: cost };
}

const VARIANTS = {
  bare: (messages: readonly Message[]) => drain(query(params(messages))),
  before: (messages: readonly Message[]) => drain(passThrough(messages)),
  off: (messages: readonly Message[]) => {
    const recorder = new AgentRecorder(undefined, profile, TEST_MODEL);
    return drain(recorder.drive(params(messages)));
  },
  on: (messages: readonly Message[]) => {
    const recorder = new AgentRecorder(undefined, profile, TEST_MODEL, {
      sink,
      parent: undefined,
      agent: { name: "main", id: "main", sessionId: "bench" },
    });
    return drain(recorder.drive(params(messages)));
  },
} as const;

export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const size of [10, 100] as const) {
    const messages = history(size);
    const samples = { bare: [] as number[], before: [] as number[], off: [] as number[], on: [] as number[] };
    for (const variant of Object.values(VARIANTS)) await cpuRuns(() => variant(messages), 0, 20);
    // Each sample is RUNS_PER_SAMPLE runs (a single run is under a millisecond of CPU).
    for (let index = 0; index < SAMPLES; index++) {
      for (const [name, variant] of Object.entries(VARIANTS)) {
        const sample = await cpuRuns(
          async () => {
            for (let run = 0; run < RUNS_PER_SAMPLE; run++) await variant(messages);
          },
          1,
          0,
        );
        samples[name as keyof typeof samples].push(...sample);
      }
    }
    const perIteration = (name: keyof typeof samples) =>
      percentile(samples[name], 50) / RUNS_PER_SAMPLE / (TURNS + 1);
    results.push(
      compare(
        `telemetry off: loop CPU per iteration, ${size} messages, the agent runner's drive vs the same pass-through without the telemetry hooks (1.0 = no cost)`,
        "p50 per iteration",
        "ms",
        { label: "pass-through, no telemetry code", value: perIteration("before") },
        { label: "agent runner, telemetry off", value: perIteration("off") },
        `process CPU; in-process scripted model; ${SAMPLES} interleaved samples of ${RUNS_PER_SAMPLE} runs of ${TURNS + 1} requests`,
      ),
      compare(
        `telemetry off: loop CPU per iteration, ${size} messages, through the agent runner vs loop-core's query() alone`,
        "p50 per iteration",
        "ms",
        { label: "query() alone", value: perIteration("bare") },
        { label: "agent runner, telemetry off", value: perIteration("off") },
        `process CPU; in-process scripted model; ${SAMPLES} interleaved samples of ${RUNS_PER_SAMPLE} runs of ${TURNS + 1} requests`,
      ),
      compare(
        `telemetry on (spans and metric points recorded, export not timed): loop CPU per iteration, ${size} messages, vs off`,
        "p50 per iteration",
        "ms",
        { label: "telemetry off", value: perIteration("off") },
        { label: "telemetry on", value: perIteration("on") },
        `${kept} spans and points recorded`,
      ),
    );
  }
  return results;
}
