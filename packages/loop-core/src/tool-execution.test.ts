import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { LoopHooks } from "./hooks.js";
import type { ToolUseBlock, UserMessage } from "./messages.js";
import type { CanUseTool } from "./permissions.js";
import { query } from "./query.js";
import { StreamingToolExecutor } from "./streaming-tool-executor.js";
import { simParams, useSimulator } from "./test-support/sim-harness.js";
import { collect, testContext, testTool } from "./testing/index.js";
import type { Tool } from "./tool.js";
import { runToolUse } from "./tool-execution.js";

const block = (name: string, input: Record<string, unknown>, id = `toolu_${name}`): ToolUseBlock =>
  ({ type: "tool_use", id, name, input, caller: { type: "direct" } }) as ToolUseBlock;

function resultOf(message: UserMessage): { content: unknown; is_error?: boolean } {
  const content = message.message.content;
  if (typeof content === "string" || content[0]?.type !== "tool_result") throw new Error("not a tool_result");
  return content[0] as { content: unknown; is_error?: boolean };
}

async function run(
  tools: readonly Tool[],
  use: ToolUseBlock,
  options: { hooks?: LoopHooks; canUseTool?: CanUseTool; disabledTools?: readonly string[] } = {},
) {
  const { disabledTools } = options;
  const context = { ...testContext({ tools }), ...(disabledTools ? { disabledTools } : {}) };
  const outcome = await runToolUse(use, "parent-uuid", {
    context,
    canUseTool: options.canUseTool ?? (async () => ({ behavior: "allow" })),
    hooks: options.hooks,
    uuid: () => crypto.randomUUID(),
  });
  return { outcome, result: resultOf(outcome.message), context };
}

const readTool = testTool({
  name: "Read",
  schema: z.object({ path: z.string() }),
  call: async (input) => ({ content: `contents of ${String(input.path)}` }),
});

describe("R-T1: the per-tool pipeline", () => {
  it("R-T1: an unknown tool becomes an is_error result, not a throw", async () => {
    const { result } = await run([readTool], block("Nope", {}));
    expect(result.is_error).toBe(true);
    expect(String(result.content)).toContain("No such tool available: Nope");
  });

  it("R-P1, R-X1: a tool a bare deny rule removed is named as disabled, in Claude Code's words", async () => {
    const answer = async (name: string) =>
      (await run([readTool], block(name, {}), { disabledTools: ["Write"] })).result;
    const write = await answer("Write");
    expect(write.is_error).toBe(true);
    expect(write.content).toBe(
      "<tool_use_error>Error: No such tool available: Write. Write is disabled for this session, in subagents as well as here.</tool_use_error>",
    );
    // A name no rule removed is simply unknown.
    expect((await answer("Nope")).content).toBe(
      "<tool_use_error>No such tool available: Nope</tool_use_error>",
    );
  });

  it("R-T1: invalid input is caught by the zod schema", async () => {
    const { result } = await run([readTool], block("Read", { path: 42 }));
    expect(result.is_error).toBe(true);
    expect(String(result.content)).toContain("InputValidationError");
  });

  it("R-T1: aliases find the tool; backfill runs after validation", async () => {
    const tool: Tool = {
      ...readTool,
      aliases: ["Cat"],
      backfillInput: (input) => ({ ...input, path: `/abs/${String(input.path)}` }),
    };
    const { result } = await run([tool], block("Cat", { path: "a.txt" }));
    expect(result.content).toBe("contents of /abs/a.txt");
  });

  it("R-T1: a PreToolUse hook can rewrite the input (validated again) or deny", async () => {
    const rewrite = await run([readTool], block("Read", { path: "a" }), {
      hooks: { preToolUse: [async () => ({ updatedInput: { path: "b" } })] },
    });
    expect(rewrite.result.content).toBe("contents of b");
    const deny = await run([readTool], block("Read", { path: "a" }), {
      hooks: { preToolUse: [async () => ({ decision: "deny", reason: "secret file" })] },
    });
    expect(deny.result.is_error).toBe(true);
    expect(String(deny.result.content)).toContain("secret file");
  });

  it("R-T1, R-P1: a PreToolUse allow reaches canUseTool as approvedByHook, which may still deny (plan mode)", async () => {
    const seen: (boolean | undefined)[] = [];
    const canUseTool: CanUseTool = async (_name, _input, options) => {
      seen.push(options.approvedByHook);
      return options.approvedByHook === true
        ? { behavior: "allow" }
        : { behavior: "deny", message: "not in plan mode" };
    };
    const allowed = await run([readTool], block("Read", { path: "a" }), {
      canUseTool,
      hooks: { preToolUse: [async () => ({ decision: "allow" })] },
    });
    expect(allowed.result.is_error).toBeUndefined();
    const denied = await run([readTool], block("Read", { path: "a" }), { canUseTool });
    expect(denied.result).toMatchObject({ is_error: true });
    expect(String(denied.result.content)).toContain("not in plan mode");
    const refused = await run([readTool], block("Read", { path: "a" }), {
      canUseTool: async () => ({ behavior: "deny", message: "plan mode" }),
      hooks: { preToolUse: [async () => ({ decision: "allow" })] },
    });
    expect(String(refused.result.content)).toContain("plan mode");
    expect(seen).toEqual([true, undefined]);
  });

  it("R-X1, R-K2: a denial reaches the model in the asker's words, untagged; its tool_use_result says it is an error", async () => {
    const { outcome, result } = await run([readTool], block("Read", { path: "a" }), {
      canUseTool: async () => ({ behavior: "deny", message: "Writing is not allowed" }),
    });
    expect(result).toMatchObject({ content: "Writing is not allowed", is_error: true });
    expect(outcome.message.toolUseResult).toBe("Error: Writing is not allowed");
  });

  it("R-T1: a denial with interrupt aborts the run", async () => {
    const { context } = await run([readTool], block("Read", { path: "a" }), {
      canUseTool: async () => ({ behavior: "deny", message: "no", interrupt: true }),
    });
    expect(context.abortController.signal.aborted).toBe(true);
  });

  it("R-T1: a throwing tool and a throwing hook are data, not crashes", async () => {
    const broken = testTool({
      name: "Broken",
      call: async () => {
        throw new Error("disk on fire");
      },
    });
    const { result } = await run([broken], block("Broken", {}), {
      hooks: {
        preToolUse: [
          async () => {
            throw new Error("hook bug");
          },
        ],
      },
    });
    expect(result.is_error).toBe(true);
    expect(String(result.content)).toContain("disk on fire");
  });

  it("R-T1: PostToolUse can replace the result and add context; results are size-capped", async () => {
    const { result } = await run([readTool], block("Read", { path: "a" }), {
      hooks: {
        postToolUse: [
          async () => ({ updatedResult: { content: "cleaned" }, additionalContext: "audit: ok" }),
        ],
      },
    });
    expect(result.content).toEqual([
      { type: "text", text: "cleaned" },
      { type: "text", text: "audit: ok" },
    ]);
    const big = testTool({
      name: "Big",
      maxResultSizeChars: 100,
      call: async () => ({ content: "x".repeat(1_000) }),
    });
    const capped = await run([big], block("Big", {}));
    expect(String(capped.result.content)).toMatch(/^x{100}\n… \[900 characters truncated\]$/);
  });

  it("R-T1: PostToolUse continue:false stops the loop", async () => {
    const { outcome } = await run([readTool], block("Read", { path: "a" }), {
      hooks: { postToolUse: [async () => ({ continue: false, stopReason: "audit failed" })] },
    });
    expect(outcome.stop).toEqual({ reason: "audit failed" });
  });
});

describe("R-T2: concurrency", () => {
  function barrierTools(count: number, safe: boolean) {
    const started: string[] = [];
    const finished: string[] = [];
    let release!: () => void;
    const allStarted = new Promise<void>((resolve) => {
      release = resolve;
    });
    let running = 0;
    let maxRunning = 0;
    const tools = Array.from({ length: count }, (_, index) =>
      testTool({
        name: `T${index}`,
        safe,
        call: async () => {
          started.push(`T${index}`);
          running++;
          maxRunning = Math.max(maxRunning, running);
          if (started.length === count) release();
          // Safe tools wait until all have started: this deadlocks unless they run in parallel.
          if (safe) await allStarted;
          // Later tools finish first, so call order ≠ completion order.
          for (let tick = 0; tick < (count - index) * 3; tick++) await Promise.resolve();
          running--;
          finished.push(`T${index}`);
          return { content: `result ${index}` };
        },
      }),
    );
    return { tools, started, finished, maxRunning: () => maxRunning };
  }

  async function runAll(tools: readonly Tool[]) {
    const executor = new StreamingToolExecutor({
      context: testContext({ tools }),
      canUseTool: async () => ({ behavior: "allow" }),
      hooks: undefined,
      uuid: () => crypto.randomUUID(),
    });
    for (const [index, tool] of tools.entries())
      executor.addTool(block(tool.name, {}, `toolu_${index}`), "p");
    const results: unknown[] = [];
    for await (const outcome of executor.results()) results.push(resultOf(outcome.message).content);
    return results;
  }

  it("R-T2, R-K2: consecutive safe calls run in parallel, each result out as its call ends (as Claude Code yields them)", async () => {
    const { tools, finished, maxRunning } = barrierTools(3, true);
    const results = await runAll(tools);
    expect(maxRunning()).toBe(3);
    expect(finished).toEqual(["T2", "T1", "T0"]);
    expect(results).toEqual(["result 2", "result 1", "result 0"]);
  });

  it("R-T2: unsafe calls run alone, in order", async () => {
    const { tools, started, maxRunning } = barrierTools(3, false);
    const results = await runAll(tools);
    expect(maxRunning()).toBe(1);
    expect(started).toEqual(["T0", "T1", "T2"]);
    expect(results).toEqual(["result 0", "result 1", "result 2"]);
  });
});

describe("R-T2, R-K2: parallel results printed as they end, sent in call order", () => {
  const sims = useSimulator();

  it("R-T2, R-K2: two safe calls — the later-called one ends first and is yielded first; the next request holds both results in call order", async () => {
    const handle = await sims.start([
      {
        content: [
          { type: "tool_use", name: "Slow", input: {} },
          { type: "tool_use", name: "Fast", input: {} },
        ],
      },
      { content: [{ type: "text", text: "done" }] },
    ]);
    let fastEnded!: () => void;
    const fastDone = new Promise<void>((resolve) => {
      fastEnded = resolve;
    });
    const slow = testTool({
      name: "Slow",
      call: async () => {
        await fastDone;
        return { content: "slow result" };
      },
    });
    const fast = testTool({
      name: "Fast",
      call: async () => {
        setImmediate(fastEnded);
        return { content: "fast result" };
      },
    });
    const { events } = await collect(query(simParams(handle, { tools: [slow, fast] })));
    const printed = events.flatMap((event) =>
      event.type === "user" &&
      typeof event.message.content !== "string" &&
      event.message.content[0]?.type === "tool_result"
        ? [String(resultOf(event).content)]
        : [],
    );
    expect(printed).toEqual(["fast result", "slow result"]);
    const [, second] = handle.messageRequests();
    const sent = JSON.parse(second?.rawBody ?? "{}") as {
      messages: { role: string; content: { type: string; tool_use_id?: string; content?: unknown }[] }[];
    };
    const answers = sent.messages.at(-1)?.content ?? [];
    const calls = sent.messages.at(-2)?.content.filter((block) => block.type === "tool_use") ?? [];
    expect(answers.map((block) => block.content)).toEqual(["slow result", "fast result"]);
    expect(answers.map((block) => block.tool_use_id)).toEqual(
      calls.map((call) => (call as { id?: string }).id),
    );
  });
});

describe("R-T2: the streaming executor, against a slow simulated stream", () => {
  const sims = useSimulator();

  async function timeline(streaming: boolean): Promise<string[]> {
    const handle = await sims.start((request) =>
      request.turnIndex === 0
        ? {
            content: [
              { type: "tool_use", name: "Probe", input: {} },
              { type: "text", text: "Meanwhile I keep talking for quite a while. ".repeat(6) },
            ],
          }
        : { content: [{ type: "text", text: "done" }] },
    );
    handle.sim.setFaults({ schedule: [{ kind: "slow", from: 1, to: 1, slowMs: 15 }] });
    const log: string[] = [];
    const probe = testTool({
      name: "Probe",
      call: async () => {
        log.push("tool_finished");
        return { content: "probed" };
      },
    });
    const generator = query(simParams(handle, { tools: [probe], streamingToolExecution: streaming }));
    for (let next = await generator.next(); !next.done; next = await generator.next()) {
      if (next.value.type === "stream_event" && next.value.event.type === "message_stop")
        log.push("message_stop");
      if (next.value.type === "stream_event" && next.value.event.type === "content_block_stop") {
        log.push(`block_stop_${next.value.event.index}`);
      }
    }
    return log.slice(0, 4);
  }

  it("R-T2: a safe tool finishes before message_stop when streaming, after it when not", async () => {
    const streamed = await timeline(true);
    expect(streamed.indexOf("tool_finished")).toBeLessThan(streamed.indexOf("message_stop"));
    expect(streamed.indexOf("tool_finished")).toBeLessThan(streamed.indexOf("block_stop_1"));
    const after = await timeline(false);
    expect(after.indexOf("tool_finished")).toBeGreaterThan(after.indexOf("message_stop"));
  });
});
