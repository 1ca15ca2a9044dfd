import { getModelInfo, thresholdsFor } from "@forkloop/loop-core";
import type { BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SDKMessage } from "./messages.js";
import { OptionsError } from "./options-error.js";
import { query } from "./query.js";
import { REFUSED_CONTROLS } from "./query-control.js";
import { promptStream, startHarness } from "./test-support/sdk-harness.js";
import { DEFAULT_MODEL } from "./tool-selection.js";

type Harness = Awaited<ReturnType<typeof startHarness>>;

function brain(request: BrainRequest) {
  if (request.querySource?.startsWith("agent:")) {
    // The sub-agent works for a long time unless it is stopped.
    if (request.lastToolResults.length > 0) return { content: [{ type: "text" as const, text: "slept" }] };
    return { content: [{ type: "tool_use" as const, name: "Bash", input: { command: "sleep 120" } }] };
  }
  if (request.querySource !== "sdk") return undefined;
  if (request.lastToolResults.length > 0) return { content: [{ type: "text" as const, text: "done" }] };
  if ((request.lastUserText ?? "").includes("delegate")) {
    return {
      content: [
        {
          type: "tool_use" as const,
          name: "Agent",
          input: { description: "sleep", prompt: "Sleep a long time.", subagent_type: "sleeper" },
        },
      ],
    };
  }
  return { content: [{ type: "text" as const, text: "Hello there, this is a reply of a few words." }] };
}

describe("R-K1: the Agent SDK's Query control methods, answered in-process or refused by name", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness(brain);
  });
  afterAll(async () => {
    await harness.close();
  });

  it("R-K1: initializationResult, supportedAgents, accountInfo and getContextUsage describe the session; refused methods name themselves", async () => {
    const input = promptStream();
    const run = query({
      prompt: input.stream,
      options: harness.options({
        agents: { sleeper: { description: "Sleeps", prompt: "You sleep.", tools: ["Bash"] } },
      }),
    });
    // Asked before the first message: answered from the options, never waiting on the session.
    const early = await run.initializationResult();
    expect(early.agents.map((agent) => agent.name)).toEqual(["general-purpose", "sleeper"]);
    expect(early.models.length).toBeGreaterThan(0);
    expect(early.account).toEqual({ apiKeySource: "ANTHROPIC_API_KEY", apiProvider: "firstParty" });
    input.push("hello");
    for await (const message of run) if (message.type === "result") break;

    const usage = await run.getContextUsage();
    expect(usage.model).toBe(DEFAULT_MODEL);
    expect(usage.totalTokens).toBeGreaterThan(0);
    expect(usage.apiUsage?.output_tokens).toBeGreaterThan(0);
    const byId = Object.fromEntries(usage.categories.map((category) => [category.id, category.tokens]));
    expect(byId.system_prompt).toBeGreaterThan(0);
    expect(byId.system_tools).toBeGreaterThan(0);
    expect(byId.messages).toBeGreaterThan(0);
    expect(usage.totalTokens).toBe(
      (byId.system_prompt ?? 0) + (byId.system_tools ?? 0) + (byId.messages ?? 0),
    );
    expect(usage.maxTokens).toBeGreaterThan(usage.totalTokens);

    expect(await run.backgroundTasks()).toBe(false);
    expect((await run.rewindFiles("x")).canRewind).toBe(false);
    for (const method of REFUSED_CONTROLS) {
      const call = (run as unknown as Record<string, () => Promise<unknown>>)[method];
      await expect(call?.call(run), method).rejects.toThrow(
        new RegExp(`Query\\.${method}\\(\\) is not supported`),
      );
    }
    await expect(run.stopTask("no-such-task")).rejects.toThrow(OptionsError);
    expect(await run.setPermissionMode("acceptEdits")).toEqual({ mode: "acceptEdits" });
    expect(await run.interrupt()).toEqual({ still_queued: [] });
    input.end();
    run.close();
  });

  it("R-K1, R-C7: getContextUsage measures free space on the window the session runs with: CLAUDE_CODE_AUTO_COMPACT_WINDOW wins over the autoCompactWindow option", async () => {
    const run = query({
      prompt: "hello",
      options: harness.options({ autoCompactWindow: 400_000 }),
    });
    // The env is the query's own (the harness's plus the window).
    const options = harness.options({ autoCompactWindow: 400_000 });
    const windowed = query({
      prompt: "hello",
      options: { ...options, env: { ...options.env, CLAUDE_CODE_AUTO_COMPACT_WINDOW: "150k" } },
    });
    const measured: number[] = [];
    for (const each of [run, windowed]) {
      for await (const message of each) if (message.type === "result") break;
      const usage = await each.getContextUsage();
      const free = usage.categories.find((category) => category.id === "free_space")?.tokens ?? 0;
      measured.push(free + usage.totalTokens);
      each.close();
    }
    const info = getModelInfo(DEFAULT_MODEL);
    expect(measured).toEqual([
      thresholdsFor(info, 400_000).autoCompact,
      thresholdsFor(info, 150_000).autoCompact,
    ]);
  });

  it("R-K1: stopTask stops a running sub-agent by task_started's task_id; its task ends stopped", async () => {
    const input = promptStream();
    const run = query({
      prompt: input.stream,
      options: harness.options({
        allowedTools: ["Bash", "Agent"],
        agents: { sleeper: { description: "Sleeps", prompt: "You sleep.", tools: ["Bash"] } },
      }),
    });
    input.push("delegate the sleeping");
    const seen: SDKMessage[] = [];
    for await (const message of run) {
      seen.push(message);
      // Stopped once its long command runs (its tool_use message has been yielded).
      if (message.type === "assistant" && message.parent_tool_use_id !== null) {
        const started = seen.find((m) => m.type === "system" && m.subtype === "task_started");
        await run.stopTask((started as { task_id: string }).task_id);
      }
      if (message.type === "result") break;
    }
    const notification = seen.find((m) => m.type === "system" && m.subtype === "task_notification");
    expect(notification).toMatchObject({ status: "stopped" });
    expect(seen.at(-1)).toMatchObject({ type: "result", subtype: "success" });
    input.end();
    run.close();
  });

  it('R-K1, R-X2: accountInfo() and initializationResult() say apiKeySource "apiKeyHelper" once the session runs on a settings apiKeyHelper\'s key, as its init line does', async () => {
    const input = promptStream();
    const run = query({
      prompt: input.stream,
      options: harness.options({
        // No key in the environment: the helper's key authenticates.
        env: { ANTHROPIC_BASE_URL: harness.sim.url, HOME: harness.dir },
        settings: { apiKeyHelper: "printf '%s\\n' helper-key" },
      }),
    });
    input.push("hello");
    // Read up to the result without leaving the loop (a break would close the query and its session).
    const messages = run[Symbol.asyncIterator]();
    const seen: SDKMessage[] = [];
    while (seen.at(-1)?.type !== "result") {
      const next = await messages.next();
      if (next.done === true) break;
      seen.push(next.value);
    }
    expect(seen.find((m) => m.type === "system" && m.subtype === "init")).toMatchObject({
      apiKeySource: "apiKeyHelper",
    });
    expect(seen.at(-1)).toMatchObject({ type: "result", subtype: "success" });
    expect(await run.accountInfo()).toEqual({ apiKeySource: "apiKeyHelper", apiProvider: "firstParty" });
    expect((await run.initializationResult()).account.apiKeySource).toBe("apiKeyHelper");
    input.end();
    run.close();
  });
});
