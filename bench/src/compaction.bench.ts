/**
 * compaction figures (R-C0–R-C8):
 * 1. Context-pipeline time per pass (R-C0 budget+snip → R-C2 microcompact → R-C3 collapse → R-C4
 *    auto-compact decision) on histories of 1,000 and 10,000 messages, in two states: below every
 *    line (the common pass: scan and decide), and in the microcompact band (old tool results are
 *    selected and cleared). The ratio 10k/1k shows how the pass scales.
 * 2. Cost of one compaction in cost-weighted input tokens (uncached ×1, cache write ×1.25, cache
 *    read ×0.1), both against the simulator over real HTTP: the cache-safe compact request
 *    (parent's exact prefix + one instruction, R-F3) vs a naive summarizer request with its own
 *    system prompt and the transcript pasted as text. The simulator's extractive summarizer brain
 *    answers both (a deterministic stand-in, not a model); only the input side is compared.
 */
import Anthropic from "@anthropic-ai/sdk";
import {
  buildCompactInstruction,
  type CompactionPipeline,
  createContextPipeline,
  createQueryCompactRunner,
} from "@forkloop/compaction";
import {
  createHistory,
  createScriptedAgent,
  createWorkTool,
  mainAgentParams,
} from "@forkloop/compaction/testing";
import {
  type CacheSafeParams,
  type ContextStageInput,
  type Message,
  type ModelInfo,
  query,
  tokenCountWithEstimation,
} from "@forkloop/loop-core";
import { type Brain, startSimulator } from "@forkloop/sim";
import { costWeightedInputTokens } from "./cost-weighted-tokens.js";
import { type BenchResult, compare, percentile, timeRuns } from "./harness.js";

const fresh = { compacted: false, turnCounter: 0, turnId: "bench", consecutiveFailures: 0 };

function benchHistory(messages: number): Message[] {
  const history = createHistory();
  history.user("Port every module to the structured logger; keep the exports unchanged.");
  for (let i = 0; history.messages.length < messages; i++) {
    history.toolCall(
      "Read",
      { file_path: `/src/mod${i % 200}.ts` },
      `export function f${i}() { log("call ${i}"); }\n`.repeat(3),
    );
  }
  return history.messages;
}

function modelFor(tokens: number, band: "below" | "microcompact"): ModelInfo {
  // below: the auto-compact line far above; microcompact: tokens at 83% of the line (band 60–100%).
  const autoCompact = band === "below" ? tokens * 10 : Math.ceil(tokens * 1.2);
  return {
    id: `bench-${band}`,
    contextWindow: autoCompact + 13_000 + 20_000,
    maxOutputTokens: 64_000,
    inputPricePerMTok: 3,
    outputPricePerMTok: 15,
  };
}

async function pass(pipeline: CompactionPipeline, input: ContextStageInput): Promise<void> {
  let stage = pipeline.budgetAndSnip(input);
  stage = await pipeline.microcompact({ ...input, messages: stage.messages });
  stage = await pipeline.collapse({ ...input, messages: stage.messages });
  await pipeline.autocompact({ ...input, messages: stage.messages });
}

async function pipelineTimes(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const band of ["below", "microcompact"] as const) {
    const medians: number[] = [];
    for (const size of [1_000, 10_000]) {
      const messages = benchHistory(size);
      const model = modelFor(tokenCountWithEstimation(messages), band);
      const pipeline = createContextPipeline({
        runCompact: async () => ({ ok: false, error: "not used" }),
        modelOverrides: [model],
        maxMessages: Number.POSITIVE_INFINITY,
      });
      const input: ContextStageInput = {
        messages,
        model: model.id,
        querySource: "repl_main_thread",
        tools: [],
        tracking: fresh,
        cacheSafeParams: undefined,
        signal: new AbortController().signal,
      };
      const samples = await timeRuns(() => pass(pipeline, input), size === 1_000 ? 100 : 30, 5);
      medians.push(percentile(samples, 50));
    }
    results.push(
      compare(
        `compaction: pipeline pass, ${band === "below" ? "below every line" : "in the microcompact band"} (lower is better)`,
        "p50 time per pass",
        "ms",
        { label: "1k messages", value: medians[0]! },
        { label: "10k messages", value: medians[1]! },
        "ratio = 10k/1k: 10 means linear in the history length",
      ),
    );
  }
  return results;
}

const workTool = createWorkTool({ lines: 25 });

/** A message as plain text, the way a naive summarizer gets the transcript (no JSON overhead). */
function renderPlain(message: Message): string {
  if (message.type === "system") return "";
  const content = message.message.content;
  if (typeof content === "string") return `${message.type}: ${content}`;
  const parts = content.map((block) => {
    if (block.type === "text") return block.text;
    if (block.type === "tool_use") return `[called ${block.name} ${JSON.stringify(block.input)}]`;
    if (block.type === "tool_result") return typeof block.content === "string" ? block.content : "";
    return "";
  });
  return `${message.type}: ${parts.join("\n")}`;
}

async function compactionCost(): Promise<BenchResult[]> {
  const TURNS = 40;
  const agent = createScriptedAgent({ turns: TURNS, modules: 1_000 });
  const sim = await startSimulator({ brain: agent as Brain });
  try {
    const client = new Anthropic({ apiKey: "bench-key", baseURL: sim.url, maxRetries: 0 });
    const model = "claude-sonnet-4-6";
    let params: CacheSafeParams | undefined;
    const run = query({
      ...mainAgentParams({
        client,
        model,
        tools: [workTool],
        task: "Port every module under /src to the structured logger.",
        systemPrompt: `You are a coding agent working in a TypeScript monorepo. ${"Follow the repository conventions, keep exports stable, run the tests after each change. ".repeat(30)}`,
      }),
    });
    let next = await run.next();
    while (!next.done) {
      if (next.value.type === "request_start") params = next.value.prefix;
      next = await run.next();
    }
    const history = next.value.messages;
    if (!params) throw new Error("the parent run saved no cache-safe parameters");
    const before = sim.requests().length;

    // Cache-safe: the parent's exact prefix + one instruction, through loop-core's query().
    const runner = createQueryCompactRunner({ client, tools: [workTool] });
    const safe = await runner({
      cacheSafeParams: { ...params, forkContextMessages: history },
      instruction: buildCompactInstruction(),
      signal: new AbortController().signal,
      querySource: "compact",
    });
    if (!safe.ok) throw new Error(safe.error);
    const safeRecord = sim.requests()[before];

    // Naive: a summarizer prompt of its own, the transcript pasted as text.
    const transcript = history.map(renderPlain).join("\n");
    await client.messages.create(
      {
        model,
        max_tokens: params.maxOutputTokens,
        system: "You are a helpful assistant that summarizes coding sessions.",
        messages: [{ role: "user", content: `${transcript}\n\n${buildCompactInstruction()}` }],
      },
      { headers: { "x-forkloop-query-source": "compact" } },
    );
    const naiveRecord = sim.requests()[before + 1];
    if (!safeRecord?.usage || !naiveRecord?.usage) throw new Error("missing usage records");
    return [
      compare(
        "compaction: cost of one compaction, cache-safe prefix vs naive summarizer (lower is better)",
        "cost-weighted input tokens",
        "tokens",
        { label: "naive summarizer", value: costWeightedInputTokens(naiveRecord.usage) },
        { label: "cache-safe fork", value: costWeightedInputTokens(safeRecord.usage) },
        `after a ${TURNS}-turn parent session on ${model}; cache-safe read ${safeRecord.usage.cache_read_input_tokens} tokens from the parent's cache`,
      ),
    ];
  } finally {
    await sim.close();
  }
}

export async function run(): Promise<BenchResult[]> {
  return [...(await pipelineTimes()), ...(await compactionCost())];
}
