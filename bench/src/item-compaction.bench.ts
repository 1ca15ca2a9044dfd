/**
 * Compaction inside one long batch item (R-C4 for batch items). A batch item is an
 * agent with its own context pipeline (createAgentContextPipeline: createContextPipeline with the
 * catalog's thresholds); here it runs in process against the simulator over real HTTP with a
 * small window (24k as in the e2e tests, and 40k), so it compacts several times. The same
 * scripted item runs twice, each on a fresh simulator (no cache shared between the two):
 * - cache-safe: every compact request is a fork of the item's own prefix (R-F3: same system,
 *   tools, model, the history as messages + one instruction), so its history is a cache read;
 * - naive summarizer: the same compact request with a summarizer system prompt of its own, so
 *   nothing after the tool definitions is a cache read (the summaries, and so the rest of the
 *   item, are the same in both runs).
 * The figures are cost-weighted input tokens (uncached ×1, cache write ×1.25, cache read ×0.1)
 * summed over the item's compact requests, and over all of its requests. The simulator's
 * extractive summarizer answers both kinds of compact request (a deterministic stand-in, not a
 * model); only the input side is compared.
 */
import Anthropic from "@anthropic-ai/sdk";
import {
  type CompactionEvent,
  type CompactRunner,
  createContextPipeline,
  createQueryCompactRunner,
} from "@forkloop/compaction";
import { createScriptedAgent, createWorkTool, mainAgentParams } from "@forkloop/compaction/testing";
import { type ModelInfo, query } from "@forkloop/loop-core";
import { type Brain, startSimulator } from "@forkloop/sim";
import { costWeightedInputTokens } from "./cost-weighted-tokens.js";
import { type BenchResult, compare } from "./harness.js";

/** One long item: turns of one Work call (30 lines of output) with `reasoningRepeat` sentences of text. */
interface Scenario {
  readonly window: number;
  readonly turns: number;
  readonly reasoningRepeat: number;
}

/**
 * 4k output cap: a 24k window compacts at 7,000 tokens (the e2e tests' window), a 40k one at
 * 23,000 (R-C7). The fixed part of a compact request (the item's newest turn, not yet cached,
 * and the instruction) weighs less against a longer cached history.
 */
const SCENARIOS: readonly Scenario[] = [
  { window: 24_000, turns: 100, reasoningRepeat: 3 },
  { window: 40_000, turns: 300, reasoningRepeat: 5 },
];
const REASONING =
  "the logger call sites in this module follow the old printf pattern, so I rewrite them with structured fields and keep the exports. ";
const workTool = createWorkTool({ lines: 30 });

function itemModel(window: number): ModelInfo {
  return {
    id: `bench-${window / 1000}k`,
    contextWindow: window,
    maxOutputTokens: 4_000,
    inputPricePerMTok: 3,
    outputPricePerMTok: 15,
  };
}
const SYSTEM_PROMPT = `You are a coding agent working in a TypeScript monorepo. ${"Follow the repository conventions, keep exports stable, run the tests after each change. ".repeat(20)}`;

/**
 * A summarizer of its own: the same history and instruction, but its own system prompt. The
 * system comes before the messages in the cache order, so nothing after the tools is a cache hit.
 */
function naiveRunner(client: Anthropic, model: ModelInfo): CompactRunner {
  const cacheSafe = createQueryCompactRunner({ client, tools: [workTool], modelOverrides: [model] });
  return (request) =>
    cacheSafe({
      ...request,
      cacheSafeParams: {
        ...request.cacheSafeParams,
        systemPrompt: [
          { type: "text", text: "You are a helpful assistant that summarizes coding sessions." },
        ],
      },
    });
}

interface ItemFigures {
  readonly compactions: number;
  readonly fallbacks: number;
  readonly compactInput: number;
  readonly totalInput: number;
  readonly compactCacheRead: number;
}

async function runItem(kind: "cache-safe" | "naive", scenario: Scenario): Promise<ItemFigures> {
  const ITEM_MODEL = itemModel(scenario.window);
  const agent = createScriptedAgent({
    turns: scenario.turns,
    modules: 1_000,
    reasoning: REASONING.repeat(scenario.reasoningRepeat),
  });
  const sim = await startSimulator({
    brain: agent as Brain,
    models: [
      {
        id: ITEM_MODEL.id,
        aliases: [],
        contextWindow: ITEM_MODEL.contextWindow,
        maxOutputTokens: ITEM_MODEL.maxOutputTokens,
        inputPricePerMTok: 3,
        outputPricePerMTok: 15,
        minCacheableTokens: 1024,
        thinking: { enabled: true, adaptive: false, disabled: true },
      },
    ],
  });
  try {
    const client = new Anthropic({ apiKey: "bench-key", baseURL: sim.url, maxRetries: 0 });
    let compactions = 0;
    /** Compactions that did not keep the summarizer's answer (rejected, or built without a model). */
    let fallbacks = 0;
    const pipeline = createContextPipeline({
      runCompact:
        kind === "cache-safe"
          ? createQueryCompactRunner({ client, tools: [workTool], modelOverrides: [ITEM_MODEL] })
          : naiveRunner(client, ITEM_MODEL),
      modelOverrides: [ITEM_MODEL],
      onEvent: (event: CompactionEvent) => {
        if (event.type === "compact_succeeded") compactions++;
        if (event.type === "compact_succeeded" && event.source !== "model") fallbacks++;
      },
    });
    const run = query({
      ...mainAgentParams({
        client,
        model: ITEM_MODEL.id,
        tools: [workTool],
        task: "Port every module under /src to the structured logger.",
        systemPrompt: SYSTEM_PROMPT,
      }),
      querySource: "batch",
      contextPipeline: pipeline,
      modelOverrides: [ITEM_MODEL],
      maxTurns: scenario.turns + 5,
    });
    let next = await run.next();
    while (!next.done) next = await run.next();
    if (next.value.reason !== "completed") throw new Error(`the ${kind} item ended ${next.value.reason}`);
    await pipeline.settle();
    const records = sim.requests().filter((record) => record.path === "/v1/messages" && record.usage);
    const compact = records.filter((record) => record.querySource === "compact");
    const weigh = (list: typeof records) =>
      list.reduce((sum, record) => sum + costWeightedInputTokens(record.usage!), 0);
    return {
      compactions,
      fallbacks,
      compactInput: weigh(compact),
      totalInput: weigh(records),
      compactCacheRead: compact.reduce((sum, record) => sum + record.usage!.cache_read_input_tokens, 0),
    };
  } finally {
    await sim.close();
  }
}

async function compareScenario(scenario: Scenario): Promise<BenchResult[]> {
  const naive = await runItem("naive", scenario);
  const safe = await runItem("cache-safe", scenario);
  if (safe.compactions < 2 || naive.compactions < 2)
    throw new Error(
      `expected ≥ 2 compactions per item (cache-safe ${safe.compactions}, naive ${naive.compactions})`,
    );
  const window = `${scenario.window / 1000}k`;
  const setting = `one ${scenario.turns}-turn batch item in a ${window} window; compactions: cache-safe ${safe.compactions}, naive ${naive.compactions} (not from the summarizer's answer: ${safe.fallbacks} / ${naive.fallbacks})`;
  return [
    compare(
      `item compaction, ${window} window: the compact requests of one long batch item, cache-safe fork vs naive summarizer (lower is better; goal ≤ 0.15)`,
      "cost-weighted input tokens per item",
      "tokens",
      { label: "naive summarizer", value: naive.compactInput },
      { label: "cache-safe fork", value: safe.compactInput },
      `${setting}; the cache-safe compact requests read ${safe.compactCacheRead} tokens from the item's cache`,
    ),
    compare(
      `item compaction, ${window} window: every request of one long batch item, cache-safe compaction vs naive summarizer (lower is better)`,
      "cost-weighted input tokens per item",
      "tokens",
      { label: "naive summarizer", value: naive.totalInput },
      { label: "cache-safe fork", value: safe.totalInput },
      setting,
    ),
  ];
}

export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const scenario of SCENARIOS) results.push(...(await compareScenario(scenario)));
  return results;
}
