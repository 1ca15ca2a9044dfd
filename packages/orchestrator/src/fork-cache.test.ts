import Anthropic from "@anthropic-ai/sdk";
import { createUserMessage } from "@forkloop/loop-core";
import type { BrainRequest, RequestRecord, Simulator } from "@forkloop/sim";
import { startSimulator } from "@forkloop/sim";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AgentPool } from "./agent-pool.js";
import { fork } from "./fork.js";
import {
  forkPrefixDifferences,
  runParentTurn,
  type SessionRig,
  startSessionRig,
  testCacheSafeParams,
  testProfile,
  testTask,
} from "./testing/index.js";

let sim: Simulator;
let pool: AgentPool;
let dir: string;

let rig: SessionRig<Simulator>;
/**
 * Holds each cold fan-out request until all four have arrived (or 10 s passed), so "launched at
 * once" does not depend on the machine's load: a pool that held the others back would leave the
 * first waiting, and the rest would arrive after its response started and read its write.
 */
const coldArrivals = (() => {
  let release: () => void = () => {};
  const allArrived = new Promise<void>((resolve) => {
    release = resolve;
  });
  let seen = 0;
  return (request: BrainRequest): Promise<void> | undefined => {
    if (!JSON.stringify(request.body.system ?? "").includes("Fan-out cold.")) return undefined;
    seen += 1;
    if (seen === 4) release();
    return Promise.race([allArrived, new Promise<void>((resolve) => setTimeout(resolve, 10_000))]);
  };
})();

beforeAll(async () => {
  rig = await startSessionRig(
    startSimulator({
      brain: async (request) => {
        await coldArrivals(request);
        return { content: [{ type: "text", text: `reply to: ${request.lastUserText?.slice(0, 40)}` }] };
      },
      // Entries become readable when the writing response starts (after the time to first token).
      latency: { default: { ttftMs: 250, prefillTokensPerSecond: 1e9, outputTokensPerSecond: 1e6 } },
    }),
    "fork",
  );
  ({ sim, pool, dir } = rig);
});
afterAll(() => rig.close());
afterEach(() => sim.clearRequests());

function messagesRequests(): RequestRecord[] {
  return sim.requests().filter((record) => record.path === "/v1/messages");
}

describe("CacheSafeParams forks (R-F3)", () => {
  it("R-F3: a fork's first request is byte-identical to the parent's up to the fork's own messages, and reads it from the cache", async () => {
    const client = new Anthropic({ apiKey: "test-key", baseURL: sim.url });
    const { cacheSafeParams } = await runParentTurn({
      client,
      prompt: "Parent: explain the repository.",
      cwd: dir,
    });
    const forked = await fork(pool, {
      cacheSafeParams,
      directive: "Fork: list the open questions.",
      querySource: "session_memory",
      cwd: dir,
    }).result;
    expect(forked.status).toBe("completed");

    const [parent, child] = messagesRequests();
    if (!parent || !child) throw new Error("expected a parent and a fork request");
    expect(child.querySource).toBe("session_memory");
    // The cache key's parts are the exact bytes the parent sent; every parent message opens the
    // fork's messages unchanged (the parent's moving breakpoint marker aside).
    expect(forkPrefixDifferences(parent.rawBody, child.rawBody)).toEqual([]);
    const childMessages = (JSON.parse(child.rawBody) as { messages: unknown[] }).messages;
    expect(JSON.stringify(childMessages.at(-1))).toContain("Fork: list the open questions.");

    // The simulator reports the parent's whole prefix as a cache read.
    const parentCached =
      (parent.usage?.cache_creation_input_tokens ?? 0) + (parent.usage?.cache_read_input_tokens ?? 0);
    expect(parentCached).toBeGreaterThan(0);
    expect(child.usage?.cache_read_input_tokens).toBe(parentCached);
    expect(forked.usage.cacheReadInputTokens).toBe(parentCached);
  });

  it("R-F3: a fork that changes max output tokens with thinking on changes the thinking budget (a documented cache break)", async () => {
    const thinking = { type: "enabled" as const, budget_tokens: 6_000 };
    // Sonnet 4.6 still takes `enabled` thinking with a budget (4.7+ only takes adaptive).
    const params = { ...testCacheSafeParams({ model: "claude-sonnet-4-6" }), thinking };
    // Both forks send the same messages: the only difference is max_tokens (and what it implies).
    const common = {
      cacheSafeParams: params,
      cwd: dir,
      workspaceRoots: [dir],
      promptMessages: [{ role: "user" as const, content: "Fork: the same instruction twice." }],
    };
    await pool.run(testTask({ id: "same", ...common })).result;
    const changed = await pool.run(
      testTask({ id: "smaller", ...common, profile: testProfile({ limits: { maxOutputTokens: 4_000 } }) }),
    ).result;
    expect(changed.status).toBe("completed");
    const [, second] = messagesRequests();
    const body = JSON.parse(second?.rawBody ?? "{}") as { thinking?: { budget_tokens: number } };
    // buildRequest keeps budget_tokens < max_tokens, so the thinking config — part of the
    // messages' cache key — differs from the parent's: only tools + system are read.
    expect(body.thinking?.budget_tokens).toBeLessThan(thinking.budget_tokens);
    expect(second?.usage?.cache_read_input_tokens).toBeGreaterThan(0);
    expect(second?.usage?.cache_creation_input_tokens).toBeGreaterThan(0);
  });
});

describe("fan-out warming (R-F4)", () => {
  const tasks = (prefix: string) => {
    // A prefix nobody has sent yet, as for a batch: the first fork must write it. Its shared
    // history (~20k tokens) is bigger than tools + system, so reading only those would show.
    const history = `Shared context: ${"the module graph has cycles; ".repeat(4_000)}`;
    const cacheSafeParams = testCacheSafeParams({ messages: [createUserMessage(history)] });
    return ["a", "b", "c", "d"].map((id) =>
      testTask({
        id: `${prefix}-${id}`,
        cwd: dir,
        workspaceRoots: [dir],
        // A unique first system block: nothing after it can be in the cache from other tests.
        cacheSafeParams: {
          ...cacheSafeParams,
          systemPrompt: [{ type: "text", text: `Fan-out ${prefix}.` }, ...cacheSafeParams.systemPrompt],
        },
      }),
    );
  };

  it("R-F4: warmed fan-out pays one cache write and N-1 reads", async () => {
    const handles = pool.runAll(tasks("warm"), {}, { warm: true });
    const results = await Promise.all(handles.map((handle) => handle.result));
    expect(results.every((result) => result.status === "completed")).toBe(true);
    const records = messagesRequests();
    const [first, ...rest] = records;
    expect(first?.usage?.cache_read_input_tokens).toBe(0);
    const written = first?.usage?.cache_creation_input_tokens ?? 0;
    for (const record of rest) {
      expect(record.startedAt).toBeGreaterThanOrEqual(first?.firstByteAt ?? Number.POSITIVE_INFINITY);
      // Tools, system AND the shared history are read: the fork marks the end of the parent's
      // prefix with a breakpoint, so the first fork's write covers it (all but its own directive).
      expect(record.usage?.cache_read_input_tokens).toBeGreaterThan(0.9 * written);
    }
  });

  it("R-F4: without warming, forks launched at once all miss", async () => {
    const handles = pool.runAll(tasks("cold"), {}, { warm: false });
    await Promise.all(handles.map((handle) => handle.result));
    const records = messagesRequests();
    expect(records).toHaveLength(4);
    for (const record of records) expect(record.usage?.cache_read_input_tokens).toBe(0);
  });
});
