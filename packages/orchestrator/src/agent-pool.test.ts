import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Brain, BrainRequest, FaultSpec, Simulator } from "@forkloop/sim";
import { startSimulator } from "@forkloop/sim";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AgentPool, createAgentPool } from "./agent-pool.js";
import type { SubAgentEvent, SubAgentResult, SubAgentTask } from "./sub-agent-types.js";
import { namedTask, testProfile } from "./testing/index.js";

/** The fork's own instruction: the last text block of the last user message. */
function agentOf(request: BrainRequest): string {
  return /Sub-agent (\S+):/.exec(request.lastUserText ?? "")?.[1] ?? "?";
}

const brain: Brain = async (request) => {
  const agent = agentOf(request);
  // The steer arrives in the same user turn as the tool's result (R-L2 queue drained after tools).
  if (request.lastUserText?.includes("also count the tests"))
    return { content: [{ type: "text", text: "steered ok" }] };
  if (agent.startsWith("slowpoke")) {
    // A reply that takes long enough for the cancel test; nothing is spawned that could outlive it.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
  }
  if (request.lastToolResults.length > 0) {
    return {
      content: [{ type: "text", text: `${agent} finished: ${request.lastToolResults[0]?.content ?? ""}` }],
    };
  }
  if (agent.startsWith("sleeper")) {
    return {
      content: [{ type: "tool_use", name: "Bash", input: { command: "sleep 30", description: "wait" } }],
    };
  }
  if (agent.startsWith("steered")) {
    // Turn 1 runs a short tool; the steer sent meanwhile joins the next request (R-L2 queue).
    if (request.lastUserText?.includes("also count the tests"))
      return { content: [{ type: "text", text: "steered ok" }] };
    if (request.turnIndex === 0) {
      return {
        content: [
          { type: "tool_use", name: "Bash", input: { command: "sleep 0.3; echo ok", description: "wait" } },
        ],
      };
    }
  }
  if (agent.startsWith("asker")) {
    return {
      content: [{ type: "tool_use", name: "Bash", input: { command: "echo asked", description: "echo" } }],
    };
  }
  return { content: [{ type: "text", text: `${agent} done` }] };
};

/** testing/faulty-worker.ts as built: workers need JavaScript. */
const FAULTY_WORKER = fileURLToPath(new URL("../dist/testing/faulty-worker.js", import.meta.url));

let sim: Simulator;
let pool: AgentPool | undefined;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({
    brain,
    // A short time to first token so concurrent requests visibly overlap.
    latency: { default: { ttftMs: 150, prefillTokensPerSecond: 1e9, outputTokensPerSecond: 1e6 } },
  });
  dir = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-pool-")));
});
afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await pool?.close();
  pool = undefined;
  sim.clearRequests();
});

function newPool(options: { maxThreads?: number; cancelGraceMs?: number } = {}): AgentPool {
  pool = createAgentPool({
    endpoint: { apiKey: "test-key", baseURL: sim.url },
    maxThreads: options.maxThreads ?? 1,
    concurrentTasksPerWorker: 8,
    cancelGraceMs: options.cancelGraceMs ?? 5_000,
    // The real worker, with the faults the crash and cancel tests ask for by task id.
    workerFile: FAULTY_WORKER,
  });
  return pool;
}

const task = (id: string, extra: Partial<SubAgentTask> = {}) => namedTask(dir, id, extra);

describe("agent pool (real worker threads, the simulator over HTTP)", () => {
  it("R-V2: prewarm starts one thread once (a second call starts no other), a fork after it runs on that thread, and the pool closes cleanly after it", async () => {
    pool = createAgentPool({
      endpoint: { apiKey: "test-key", baseURL: sim.url },
      maxThreads: 2,
      minThreads: 0,
    });
    expect(pool.stats().threads).toBe(0);
    const warmed = pool.prewarm();
    expect(pool.prewarm()).toBe(warmed);
    expect(pool.stats().threads).toBe(1);
    await warmed;
    const result = await pool.run(task("warmed")).result;
    expect(result.text).toBe("warmed done");
    expect(pool.stats().threads).toBe(1);
    await pool.close();
    expect(pool.stats().threads).toBe(0);
  });

  it("R-V2: a fork asked for while the prewarmed thread still loads runs on that thread; no second thread starts beside it", async () => {
    pool = createAgentPool({
      endpoint: { apiKey: "test-key", baseURL: sim.url },
      maxThreads: 2,
      minThreads: 0,
    });
    void pool.prewarm();
    const threads = new Set<number>();
    const handle = pool.run(task("early"), {
      onEvent: (event) => {
        if (event.type === "started") threads.add(event.threadId);
      },
    });
    expect((await handle.result).text).toBe("early done");
    expect(pool.stats().threads).toBe(1);
    expect(threads.size).toBe(1);
    await pool.close();
  });

  it("R-F2: every event a sub-agent sent reaches the parent before its result, however slowly the parent takes them", async () => {
    const agentPool = newPool({ maxThreads: 1 });
    const ids = Array.from({ length: 6 }, (_, index) => `ordered-${index}`);
    const late: string[] = [];
    const settled = new Set<string>();
    const handles = ids.map((id) =>
      agentPool.run(task(id), {
        onEvent: (event) => {
          // A parent busy with each event (printing, a slow consumer): the result's channel
          // fills while this one is still being read.
          const until = performance.now() + 3;
          while (performance.now() < until) {}
          if (event.type !== "done" && settled.has(id)) late.push(`${id}: ${event.type}`);
        },
      }),
    );
    await Promise.all(
      handles.map((handle, index) => handle.result.then(() => settled.add(ids[index] as string))),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(late).toEqual([]);
  });

  it("R-F2: parallel sub-agents on one warm thread overlap in time", async () => {
    const agentPool = newPool({ maxThreads: 1 });
    const threads = new Set<number>();
    const handles = ["p1", "p2", "p3", "p4"].map((id) =>
      agentPool.run(task(id), {
        onEvent: (event) => {
          if (event.type === "started") threads.add(event.threadId);
        },
      }),
    );
    const results = await Promise.all(handles.map((handle) => handle.result));
    expect(results.map((result) => [result.status, result.text])).toEqual(
      ["p1", "p2", "p3", "p4"].map((id) => ["completed", `${id} done`]),
    );
    const records = sim.requests().filter((record) => record.path === "/v1/messages");
    expect(records).toHaveLength(4);
    // Every request started before any of them ended: they ran at the same time.
    const lastStart = Math.max(...records.map((record) => record.startedAt));
    const firstEnd = Math.min(...records.map((record) => record.endedAt ?? Number.POSITIVE_INFINITY));
    expect(lastStart).toBeLessThan(firstEnd);
    expect(threads.size).toBe(1);
    expect(results[0]?.usage.apiCalls).toBe(1);
    expect(agentPool.stats()).toMatchObject({ threads: 1, running: 0, completed: 4 });
  });

  it("R-F2: a permission ask travels to the parent over comlink and back", async () => {
    const agentPool = newPool();
    const asked: { toolName: string; agentId: string; input: unknown }[] = [];
    const result = await agentPool.run(
      task("asker1", {
        profile: testProfile({
          permissionMode: "default",
          permissionRules: { allow: [], ask: ["Bash"], deny: [] },
        }),
      }),
      {
        canUseTool: async (toolName, input, options) => {
          asked.push({ toolName, agentId: options.agentId, input });
          return { behavior: "allow" };
        },
      },
    ).result;
    expect(asked).toEqual([
      { toolName: "Bash", agentId: "asker1", input: { command: "echo asked", description: "echo" } },
    ]);
    expect(result.status).toBe("completed");
    expect(result.text).toContain("asked");
  });

  it("R-F2: the parent's PreToolUse and Stop hooks run for a sub-agent over comlink", async () => {
    const agentPool = newPool();
    const seen: string[] = [];
    const result = await agentPool.run(task("asker3"), {
      hooks: {
        preToolUse: [
          async (input) => {
            seen.push(`pre:${input.toolName}:${input.context.agentId}`);
            return { decision: "deny", reason: "blocked by the parent's hook" };
          },
        ],
        stop: [
          async (input) => {
            seen.push(`stop:${input.messages.length > 0}`);
            return {};
          },
        ],
      },
    }).result;
    expect(seen).toEqual(["pre:Bash:asker3", "stop:true"]);
    expect(result.status).toBe("completed");
    const last = sim
      .requests()
      .filter((record) => record.path === "/v1/messages")
      .at(-1);
    expect(last?.rawBody).toContain("blocked by the parent's hook");
  });

  it("R-K2, R-F2: a sub-agent's tool call reaches the parent (tool_use_ready) before its PreToolUse hook and its permission ask run there, though they come over another port", async () => {
    const agentPool = newPool();
    const seen: string[] = [];
    for (let round = 0; round < 5; round++) {
      const result = await agentPool.run(
        task(`asker-announce${round}`, {
          profile: testProfile({
            permissionMode: "default",
            permissionRules: { allow: [], ask: ["Bash"], deny: [] },
          }),
        }),
        {
          onEvent: (event) => {
            if (event.type === "tool_use_ready") seen.push(`${round} ready:${event.name}`);
          },
          hooks: {
            preToolUse: [
              async (input) => {
                seen.push(`${round} pre:${input.toolName}`);
                return {};
              },
            ],
          },
          canUseTool: async (toolName) => {
            seen.push(`${round} ask:${toolName}`);
            return { behavior: "allow" };
          },
        },
      ).result;
      expect(result.status).toBe("completed");
    }
    expect(seen).toEqual(
      [0, 1, 2, 3, 4].flatMap((round) => [`${round} ready:Bash`, `${round} pre:Bash`, `${round} ask:Bash`]),
    );
  });

  it("R-K2, R-F2: what a sub-agent sends after a hook call (the reply holding the call) reaches the parent after that hook ran there, though the hook is slow and they come over another port", async () => {
    const agentPool = newPool();
    const seen: string[] = [];
    const result = await agentPool.run(task("asker-hooked"), {
      onEvent: (event) => {
        if (event.type === "tool_use_ready") seen.push(`ready:${event.name}`);
        if (event.type === "assistant_message" && event.message.content.some((b) => b.type === "tool_use"))
          seen.push("reply with the call");
      },
      hooks: {
        preToolUse: [
          async (input) => {
            seen.push(`pre:${input.toolName}`);
            // The reply's end is sent meanwhile: the parent hands it on once the hook has run.
            await new Promise((resolve) => setTimeout(resolve, 300));
            seen.push("pre answered");
            return {};
          },
        ],
      },
    }).result;
    expect(result.status).toBe("completed");
    expect(seen.slice(0, 4)).toEqual(["ready:Bash", "pre:Bash", "pre answered", "reply with the call"]);
  });

  it("R-F2: a denial from the parent reaches the model as an error tool_result", async () => {
    const agentPool = newPool();
    const result = await agentPool.run(
      task("asker2", {
        profile: testProfile({
          permissionMode: "default",
          permissionRules: { allow: [], ask: ["Bash"], deny: [] },
        }),
      }),
      { canUseTool: async () => ({ behavior: "deny", message: "not today" }) },
    ).result;
    const last = sim
      .requests()
      .filter((record) => record.path === "/v1/messages")
      .at(-1);
    expect(last?.rawBody).toContain("not today");
    expect(result.status).toBe("completed");
  });

  it("R-F2: cancellation mid-tool is cooperative: the thread survives and carries the next sub-agent", async () => {
    const agentPool = newPool({ maxThreads: 1 });
    const threads: number[] = [];
    const onEvent = (event: SubAgentEvent) => {
      if (event.type === "started") threads.push(event.threadId);
      if (event.type === "tool_use") setTimeout(() => handle.cancel("user pressed stop"), 100);
    };
    const handle = agentPool.run(task("sleeper1"), { onEvent });
    const cancelled = await handle.result;
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.terminal).toBe("aborted_tools");
    const next = await agentPool.run(task("after"), { onEvent }).result;
    expect(next.status).toBe("completed");
    expect(new Set(threads).size).toBe(1);
  });

  it("R-F2: a worker that ignores cancel is killed after the grace period", async () => {
    const agentPool = newPool({ cancelGraceMs: 200 });
    const handle = agentPool.run(task("slowpoke-fault-ignore_cancel"), {
      onEvent: (event) => {
        if (event.type === "request_start") setTimeout(() => handle.cancel(), 50);
      },
    });
    const result = await handle.result;
    expect(result.status).toBe("cancelled");
    expect(result.error?.code).toBe("worker_killed");
    expect((await agentPool.run(task("revived")).result).status).toBe("completed");
  });

  it("R-F2: steering over comlink: a message queued while a tool runs joins the next request", async () => {
    const agentPool = newPool();
    const handle = agentPool.run(task("steered1"), {
      onEvent: (event) => {
        if (event.type === "tool_use") handle.steer("Please also count the tests.");
      },
    });
    const result = await handle.result;
    expect(result.text).toBe("steered ok");
    const last = sim
      .requests()
      .filter((record) => record.path === "/v1/messages")
      .at(-1);
    expect(last?.rawBody).toContain("also count the tests");
  });

  it("pauseUntil holds every worker's next request until the pause ends", async () => {
    const agentPool = newPool();
    const until = Date.now() + 300;
    agentPool.pauseUntil(until);
    const result = await agentPool.run(task("paused")).result;
    expect(result.status).toBe("completed");
    const [record] = sim.requests().filter((entry) => entry.path === "/v1/messages");
    expect(record?.startedAt).toBeGreaterThanOrEqual(until);
  });

  it("R-B1: the parent's request gate is awaited before every request of a sub-agent (each turn)", async () => {
    const agentPool = newPool();
    let admitted = 0;
    const result = await agentPool.run(task("asker4"), {
      requestSlot: async () => {
        admitted++;
        // Held a little: the request must not reach the simulator before the gate resolves.
        await new Promise((resolve) => setTimeout(resolve, 100));
      },
    }).result;
    expect(result.status).toBe("completed");
    const records = sim.requests().filter((entry) => entry.path === "/v1/messages");
    expect(records).toHaveLength(2); // the Bash turn and the answer
    expect(admitted).toBe(2);
  });

  it("R-B1: a cancel stops a request waiting on the gate — nothing is sent, the gate's signal aborts, the thread lives", async () => {
    const agentPool = newPool({ cancelGraceMs: 5_000 });
    let gateSignal: AbortSignal | undefined;
    const handle = agentPool.run(task("gated"), {
      requestSlot: (signal) => {
        gateSignal = signal;
        setTimeout(() => handle.cancel("stopped while waiting on the limit"), 100);
        return new Promise<void>(() => {}); // a limit that never frees up
      },
    });
    const result = await handle.result;
    expect(result.status).toBe("cancelled");
    expect(result.error?.code).not.toBe("worker_killed");
    expect(gateSignal?.aborted).toBe(true);
    expect(sim.requests().filter((entry) => entry.path === "/v1/messages")).toHaveLength(0);
  });

  /**
   * R-B1: a pool on a simulator of its own (`faults`: request numbers count from its
   * start) whose requests get a 1 s headers deadline and one retry (counted as api_retry). The
   * waits below are longer than the deadline; the deadline itself is loose enough for a loaded
   * machine's first request.
   */
  async function tightDeadlinePool(faults?: FaultSpec): Promise<{ pool: AgentPool; sim: Simulator }> {
    const own = await startSimulator({ brain, latency: "none", ...(faults === undefined ? {} : { faults }) });
    ownSims.push(own);
    pool = createAgentPool({
      endpoint: {
        apiKey: "test-key",
        baseURL: own.url,
        retry: { headersTimeoutMs: HEADERS_DEADLINE_MS, maxRetries: 1, baseDelayMs: 10 },
      },
      maxThreads: 1,
      concurrentTasksPerWorker: 8,
    });
    return { pool, sim: own };
  }
  const HEADERS_DEADLINE_MS = 1_000;
  const ownSims: Simulator[] = [];
  afterAll(async () => {
    await Promise.all(ownSims.map((own) => own.close()));
  });

  it("R-B1: a wait on the request gate longer than the headers deadline is not a timeout — the request is sent once, no retry", async () => {
    const { pool: agentPool, sim: own } = await tightDeadlinePool();
    const events: SubAgentEvent[] = [];
    const result = await agentPool.run(task("patient"), {
      requestSlot: () => new Promise((resolve) => setTimeout(resolve, 2.5 * HEADERS_DEADLINE_MS)),
      onEvent: (event) => events.push(event),
    }).result;
    expect(result.status).toBe("completed");
    expect(result.text).toBe("patient done");
    expect(events.filter((event) => event.type === "api_retry")).toEqual([]);
    expect(own.requests().filter((entry) => entry.path === "/v1/messages")).toHaveLength(1);
  });

  it("R-B1: a pool-wide 429 pause longer than the headers deadline is not a timeout for the requests waiting on it", async () => {
    // The first request gets a 429 with retry-after 2.5 s: the whole pool pauses.
    const { pool: agentPool, sim: own } = await tightDeadlinePool({
      schedule: [{ kind: "429", from: 1, to: 1, retryAfterSeconds: 2.5 }],
    });
    const events: SubAgentEvent[] = [];
    let waiter: Promise<SubAgentResult> | undefined;
    let pausedUntil = 0;
    // "waiter" starts during the pause "limited" caused.
    const limited = agentPool.run(task("limited"), {
      onEvent: (event) => {
        events.push(event);
        if (event.type !== "rate_limited" || waiter) return;
        pausedUntil = event.until;
        waiter = agentPool.run(task("waiter"), { onEvent: (next) => events.push(next) }).result;
      },
    }).result;
    expect((await limited).status).toBe("completed");
    expect((await waiter)?.status).toBe("completed");
    // Only the 429 itself was retried, not the request that waited on its pause.
    expect(events.filter((event) => event.type === "api_retry").map((event) => event.agentId)).toEqual([
      "limited",
    ]);
    expect(own.requests().filter((entry) => entry.path === "/v1/messages")).toHaveLength(3);
    const waiterStarts = events.flatMap((event) =>
      event.type === "request_start" && event.agentId === "waiter" ? [event.at] : [],
    );
    expect(waiterStarts).toHaveLength(1);
    expect(waiterStarts[0]).toBeGreaterThanOrEqual(pausedUntil);
  });

  it("R-B1: a cancel ends a wait on a pool-wide pause at once — nothing is sent, the pause is not sat out", async () => {
    const agentPool = newPool({ cancelGraceMs: 5_000 });
    const until = Date.now() + 20_000;
    agentPool.pauseUntil(until);
    const handle = agentPool.run(task("pausedcancel"), {
      onEvent: (event) => {
        if (event.type === "started") setTimeout(() => handle.cancel("stopped during the pause"), 100);
      },
    });
    const result = await handle.result;
    expect(result.status).toBe("cancelled");
    expect(result.error?.code).not.toBe("worker_killed");
    expect(Date.now()).toBeLessThan(until);
    expect(sim.requests().filter((entry) => entry.path === "/v1/messages")).toHaveLength(0);
  });

  it("a malformed permission rule is an invalid_task result, not a crash", async () => {
    const agentPool = newPool();
    const result = await agentPool.run(
      task("badrule", { profile: testProfile({ permissionRules: { allow: ["Bash("], ask: [], deny: [] } }) }),
    ).result;
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe("invalid_task");
  });

  it("closing the pool ends running sub-agents with a pool_closed result", async () => {
    const agentPool = newPool();
    const handle = agentPool.run(task("slowpoke2"), {
      onEvent: (event) => {
        if (event.type === "request_start") void agentPool.close();
      },
    });
    const result = await handle.result;
    expect(result.status).toBe("cancelled");
    expect(result.error?.code).toBe("pool_closed");
    expect((await agentPool.run(task("late")).result).error?.code).toBe("pool_closed");
  });

  for (const fault of ["exit", "throw"] as const) {
    it(`R-F2: a worker crash (${fault}) fails every sub-agent it carried; the pool replaces the thread`, async () => {
      const agentPool = newPool({ maxThreads: 1 });
      const threads: number[] = [];
      const onEvent = (event: SubAgentEvent) => {
        if (event.type === "started") threads.push(event.threadId);
      };
      const bystander = agentPool.run(task("bystander"), { onEvent });
      const crasher = agentPool.run(task(`crasher-fault-${fault}`), { onEvent });
      const [bystanderResult, crasherResult] = await Promise.all([bystander.result, crasher.result]);
      for (const result of [bystanderResult, crasherResult]) {
        expect(result.status).toBe("failed");
        expect(result.error?.code).toBe("worker_crashed");
      }
      const after = await agentPool.run(task("replacement"), { onEvent }).result;
      expect(after.status).toBe("completed");
      expect(threads.at(-1)).not.toBe(threads[0]);
    });
  }
});
