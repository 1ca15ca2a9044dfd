import type { CacheSafeParams, MessageParam } from "@forkloop/loop-core";
import {
  buildForkDirective,
  createAgentPool,
  createPoolCompactRunner,
  toForkHistory,
} from "@forkloop/orchestrator";
import { testCacheSafeParams, testTask } from "@forkloop/orchestrator/testing";
import { type Brain, startSimulator } from "@forkloop/sim";
import { type BenchResult, compare } from "../harness.js";
import { messageRequests, weighted } from "./sim-requests.js";

const NAIVE_SYSTEM = [
  {
    type: "text" as const,
    text: "You are a helpful sub-agent. Read the conversation below and do the task you are given. ".repeat(
      40,
    ),
  },
];

/** A naive fork: its own system prompt (unique per measurement, so none reads another's cache). */
function naive(params: CacheSafeParams, tag: string): CacheSafeParams {
  return { ...params, systemPrompt: [{ type: "text", text: `Sub-agent ${tag}.` }, ...NAIVE_SYSTEM] };
}

/**
 * Cost-weighted input tokens of a compact fork, a session-memory fork, a 16-way fan-out and a
 * fork that breaks the cache under thinking: CacheSafeParams (+ warming) vs naive forks.
 */
export async function cacheCost(dir: string): Promise<BenchResult[]> {
  const filler = (turn: number) => `Turn ${turn}: ${"the parser keeps a table of states; ".repeat(120)}`;
  const brain: Brain = (request) => ({ content: [{ type: "text", text: filler(request.turnIndex) }] });
  const sim = await startSimulator({
    brain,
    latency: { default: { ttftMs: 60, prefillTokensPerSecond: 1e9, outputTokensPerSecond: 1e7 } },
  });
  const pool = createAgentPool({ endpoint: { apiKey: "bench-key", baseURL: sim.url }, maxThreads: 2 });
  try {
    // A parent conversation of 8 exchanges (~9k tokens of history), ending with the user turn
    // the parent just sent; its CacheSafeParams are the fork prefix.
    const exchanges: MessageParam[] = [];
    for (let turn = 0; turn < 8; turn++) {
      exchanges.push({ role: "user", content: `Step ${turn}: look at the next part of the parser.` });
      exchanges.push({ role: "assistant", content: filler(turn) });
    }
    exchanges.push({ role: "user", content: "Now plan the refactoring." });
    const params = testCacheSafeParams({ messages: toForkHistory(exchanges, null) });
    // The parent's own request: it writes the prefix the forks then read.
    const parent = await pool.run(
      testTask({
        id: "parent",
        cwd: dir,
        workspaceRoots: [dir],
        cacheSafeParams: params,
        promptMessages: [],
      }),
    ).result;
    if (parent.status !== "completed") throw new Error(`parent request failed: ${parent.error?.message}`);

    const runner = createPoolCompactRunner(pool, { cwd: dir });
    const measure = async (run: () => Promise<unknown>) => {
      sim.clearRequests();
      await run();
      return weighted(messageRequests(sim));
    };
    const signal = new AbortController().signal;
    const results: BenchResult[] = [];
    for (const querySource of ["compact", "session_memory"] as const) {
      const instruction = `Write the ${querySource} summary of the conversation.`;
      const safe = await measure(() => runner({ cacheSafeParams: params, instruction, signal, querySource }));
      const plain = await measure(() =>
        runner({
          cacheSafeParams: naive(params, querySource),
          instruction,
          signal,
          querySource,
        }),
      );
      results.push(
        compare(
          `${querySource} fork cost (lower is better)`,
          "cost-weighted input tokens",
          "tokens",
          { label: "naive fork (own system prompt)", value: plain },
          { label: "CacheSafeParams fork", value: safe },
          "uncached ×1, cache write ×1.25, cache read ×0.1; same history in both",
        ),
      );
    }

    const fanOut = (label: string, base: CacheSafeParams) =>
      Array.from({ length: 16 }, (_, index) =>
        testTask({
          id: `${label}-${index}`,
          cwd: dir,
          workspaceRoots: [dir],
          cacheSafeParams: base,
          promptMessages: buildForkDirective(base, `Fan-out ${label} ${index}: check module ${index}.`),
        }),
      );
    // A fresh prefix for both sides (as in a batch), so warming has something to do.
    const fresh = (tag: string): CacheSafeParams => ({
      ...params,
      systemPrompt: [{ type: "text", text: `Fan-out ${tag}.` }, ...params.systemPrompt],
    });
    const warmCost = await measure(async () => {
      await Promise.all(
        pool.runAll(fanOut("safe", fresh("safe")), {}, { warm: true }).map((handle) => handle.result),
      );
    });
    const naiveCost = await measure(async () => {
      const tasks = fanOut("naive", naive(params, "fan-out"));
      await Promise.all(pool.runAll(tasks, {}, { warm: false }).map((handle) => handle.result));
    });
    results.push(
      compare(
        "16-way fan-out cost (lower is better)",
        "cost-weighted input tokens",
        "tokens",
        { label: "naive forks, no warming", value: naiveCost },
        { label: "CacheSafeParams + warming", value: warmCost },
        "16 forks of the same conversation; the prefix is new to the cache on both sides",
      ),
    );

    // R-F3's documented cache break: with thinking on, a fork that lowers max_tokens below the
    // parent's thinking budget changes the thinking config, which keys every message.
    const thinkingParams: CacheSafeParams = {
      ...params,
      model: "claude-sonnet-4-6",
      thinking: { type: "enabled", budget_tokens: 6_000 },
    };
    const thinkingFork = (id: string, maxOutputTokens?: number) =>
      pool.run(
        testTask({
          id,
          cwd: dir,
          workspaceRoots: [dir],
          cacheSafeParams: thinkingParams,
          promptMessages: buildForkDirective(thinkingParams, "Fork: list the risks."),
          ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
        }),
      ).result;
    await thinkingFork("thinking-parent");
    const sameBudget = await measure(() => thinkingFork("thinking-same"));
    const changedBudget = await measure(() => thinkingFork("thinking-smaller", 4_000));
    results.push(
      compare(
        "fork that changes max_tokens under thinking (documented cache break)",
        "cost-weighted input tokens",
        "tokens",
        { label: "same max_tokens as the parent", value: sameBudget },
        { label: "max_tokens 4000 < budget 6000", value: changedBudget },
        "the thinking budget is cut to fit max_tokens; tools + system still read, messages re-written",
      ),
    );
    return results;
  } finally {
    await pool.close();
    await sim.close();
  }
}
