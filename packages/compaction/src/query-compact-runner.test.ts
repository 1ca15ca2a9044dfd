import Anthropic from "@anthropic-ai/sdk";
import { type CacheSafeParams, query } from "@forkloop/loop-core";
import { type Brain, type Simulator, startSimulator } from "@forkloop/sim";
import { afterEach, describe, expect, it } from "vitest";
import { createQueryCompactRunner } from "./query-compact-runner.js";
import { buildCompactInstruction } from "./summary.js";
import { createScriptedAgent, createWorkTool, mainAgentParams } from "./testing/index.js";

const open: Simulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((sim) => sim.close()));
});

/** Drops every cache_control marker: the marker is not content (api doc §5). */
function withoutMarkers(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value), (key, inner) => (key === "cache_control" ? undefined : inner));
}

/** Runs a parent session on the simulator: its last request's prefix and its history. */
async function parentSession(brain: Brain): Promise<{
  sim: Simulator;
  client: Anthropic;
  workTool: ReturnType<typeof createWorkTool>;
  params: CacheSafeParams;
  history: CacheSafeParams["forkContextMessages"];
}> {
  const sim = await startSimulator({ brain });
  open.push(sim);
  const client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
  const workTool = createWorkTool({ lines: 25 });
  let params: CacheSafeParams | undefined;
  const parent = query({
    ...mainAgentParams({
      client,
      model: "claude-sonnet-4-6",
      tools: [workTool],
      task: "Port the modules to the structured logger.",
      systemPrompt: `You are a coding agent. ${"Keep exports stable. ".repeat(200)}`,
    }),
  });
  let next = await parent.next();
  while (!next.done) {
    if (next.value.type === "request_start") params = next.value.prefix;
    next = await parent.next();
  }
  if (params === undefined) throw new Error("the parent sent no request");
  return { sim, client, workTool, params, history: next.value.messages };
}

describe("createQueryCompactRunner", () => {
  it("R-X1: a compact request the API refuses fails in Claude Code's words, as the main session's compaction does (API Error: 400 …)", async () => {
    const scripted = createScriptedAgent({ turns: 2, modules: 4 }) as Brain;
    const { client, workTool, params, history } = await parentSession((request) =>
      request.querySource === "compact" ? { content: [], fault: "400" } : scripted(request),
    );
    const result = await createQueryCompactRunner({ client, tools: [workTool] })({
      cacheSafeParams: { ...params, forkContextMessages: history },
      instruction: buildCompactInstruction(),
      signal: new AbortController().signal,
    });
    expect(result).toEqual({ ok: false, error: "API Error: 400 Invalid request" });
  });

  it("R-F3: the compact request is the parent's request prefix byte for byte plus one instruction, read from the cache", async () => {
    const { sim, client, workTool, params, history } = await parentSession(
      createScriptedAgent({ turns: 12, modules: 100 }) as Brain,
    );
    const parentRequest = sim.requests().at(-1)!;

    const result = await createQueryCompactRunner({ client, tools: [workTool] })({
      cacheSafeParams: { ...params, forkContextMessages: history },
      instruction: buildCompactInstruction(),
      signal: new AbortController().signal,
    });
    expect(result.ok).toBe(true);
    const compactRequest = sim.requests().at(-1)!;
    expect(compactRequest.querySource).toBe("compact");

    const before = JSON.parse(parentRequest.rawBody);
    const after = JSON.parse(compactRequest.rawBody);
    for (const key of ["model", "system", "tools", "thinking", "max_tokens"])
      expect(after[key]).toEqual(before[key]);
    const prefix = withoutMarkers(before.messages) as unknown[];
    expect((withoutMarkers(after.messages) as unknown[]).slice(0, prefix.length)).toEqual(prefix);
    expect(after.messages.length).toBe(prefix.length + 2); // the parent's final answer + the instruction
    expect(JSON.stringify(after.messages.at(-1))).toContain("Your task now is to write a summary");
    const usage = compactRequest.usage!;
    const prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    expect(usage.cache_read_input_tokens / prompt).toBeGreaterThan(0.8);
  });
});
