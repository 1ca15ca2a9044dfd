/**
 * `npm run bench -- mcp` (R-M1): an MCP tool call's latency from the main agent (main thread)
 * and from an Agent sub-agent (a worker thread whose call comes back to the parent over comlink),
 * side by side in one session; and the session start time with 0 vs 3 stdio servers (the repo's
 * test server, server-memory and server-filesystem, started in parallel). The simulator runs in
 * this process; the calls go through `query()`, the path `forkloop run` takes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { filesystemServerConfig, memoryServerConfig, testServerConfig } from "@forkloop/mcp/testing";
import { type McpServerConfig, query, type SDKMessage } from "@forkloop/sdk";
import { type Brain, startSimulator } from "@forkloop/sim";
import { type BenchResult, compare, percentile } from "./harness.js";

/** Calls per agent in the latency round (one per turn, each waits for the one before). */
const CALLS = 40;
/** Session starts per side in the start-time round. */
const STARTS = 7;

const echo = (agent: "main" | "sub", index: number) => ({
  type: "tool_use" as const,
  id: `toolu_${agent}_${index}`,
  name: "mcp__test__echo",
  input: { text: `call ${index}` },
});

/** The main agent makes CALLS calls, then starts a sub-agent that makes CALLS calls. */
const latencyBrain: Brain = (request) => {
  const turn = request.turnIndex;
  if (request.querySource?.startsWith("agent:")) {
    // A fork's history starts with the parent's: count only its own calls.
    const own = (JSON.stringify(request.body.messages).split('"toolu_sub_').length - 1) / 2; // id + result
    return own < CALLS
      ? { content: [echo("sub", own)] }
      : { content: [{ type: "text", text: "sub-agent done" }] };
  }
  if (turn < CALLS) return { content: [echo("main", turn)] };
  if (turn === CALLS) {
    return {
      content: [{ type: "tool_use", name: "Agent", input: { description: "echo", prompt: "Echo away." } }],
    };
  }
  return { content: [{ type: "text", text: "done" }] };
};

/**
 * Per call: from the assistant message carrying the tool_use to the user message carrying its
 * result, as the caller of `query()` sees them — main-agent and sub-agent calls alike.
 */
async function callLatencies(messages: AsyncIterable<SDKMessage>) {
  const asked = new Map<string, number>();
  const main: number[] = [];
  const worker: number[] = [];
  for await (const message of messages) {
    const now = performance.now();
    if (message.type === "result" && message.is_error)
      throw new Error(message.subtype === "success" ? message.result : message.errors.join("; "));
    if (message.type !== "assistant" && message.type !== "user") continue;
    const content = message.message.content;
    if (typeof content === "string") continue;
    for (const block of content as { type: string; id?: string; name?: string; tool_use_id?: string }[]) {
      if (block.type === "tool_use" && block.name === "mcp__test__echo" && block.id) asked.set(block.id, now);
      const id = block.tool_use_id;
      if (block.type === "tool_result" && id !== undefined && asked.has(id)) {
        (id.startsWith("toolu_main_") ? main : worker).push(now - (asked.get(id) ?? now));
        asked.delete(id);
      }
    }
  }
  return { main, worker };
}

export async function run(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), "forkloop-bench-mcp-"));
  const base = (env: Record<string, string>) => ({
    cwd: dir,
    env: { ...env, FORKLOOP_SIM_LATENCY: "none", HOME: dir },
    stderr: () => {},
  });
  try {
    const sim = await startSimulator({ brain: latencyBrain, recordLimit: 10 });
    let latency: Awaited<ReturnType<typeof callLatencies>>;
    try {
      latency = await callLatencies(
        query({
          prompt: "Echo away.",
          options: {
            ...base({ ANTHROPIC_API_KEY: "bench-key", ANTHROPIC_BASE_URL: sim.url }),
            mcpServers: { test: testServerConfig() },
          },
        }),
      );
    } finally {
      await sim.close();
    }
    if (latency.main.length !== CALLS || latency.worker.length !== CALLS) {
      throw new Error(`expected ${CALLS} calls each, got ${latency.main.length} / ${latency.worker.length}`);
    }

    let firstRequestAt = 0;
    const startSim = await startSimulator({
      brain: () => {
        firstRequestAt = performance.now();
        return { content: [{ type: "text", text: "started" }] };
      },
      recordLimit: 10,
    });
    const servers: Record<string, McpServerConfig> = {
      test: testServerConfig(),
      memory: memoryServerConfig(join(dir, "memory.jsonl")),
      files: filesystemServerConfig(dir),
    };
    const startOnce = async (mcpServers: Record<string, McpServerConfig>) => {
      const started = performance.now();
      for await (const _ of query({
        prompt: "Start.",
        options: {
          ...base({ ANTHROPIC_API_KEY: "bench-key", ANTHROPIC_BASE_URL: startSim.url }),
          mcpServers,
        },
      })) {
        // drained: the session ends (and closes its servers) before the next one starts
      }
      return firstRequestAt - started;
    };
    const none: number[] = [];
    const three: number[] = [];
    try {
      // Interleaved, so a busy spell on the shared machine hits both sides alike.
      for (let index = 0; index < STARTS; index++) {
        none.push(await startOnce({}));
        three.push(await startOnce(servers));
      }
    } finally {
      await startSim.close();
    }

    const median = (samples: number[]) => percentile(samples, 50);
    const callNotes = `${CALLS} sequential calls of the test server's echo (stdio) per agent, one session; from the tool_use message to its result as query() delivers them`;
    return [
      compare(
        "mcp: tool call latency, sub-agent in a worker vs main agent, median (lower is better)",
        "tool_use → tool_result",
        "ms",
        { label: "main thread", value: median(latency.main) },
        { label: "worker (call via the parent)", value: median(latency.worker) },
        callNotes,
      ),
      compare(
        "mcp: tool call latency, sub-agent in a worker vs main agent, p95 (lower is better)",
        "tool_use → tool_result",
        "ms",
        { label: "main thread", value: percentile(latency.main, 95) },
        { label: "worker (call via the parent)", value: percentile(latency.worker, 95) },
        callNotes,
      ),
      compare(
        "mcp: session start to first model request, 3 stdio servers vs none, median (lower is better)",
        "query() → first request",
        "ms",
        { label: "no MCP servers", value: median(none) },
        { label: "3 stdio servers (test, memory, filesystem)", value: median(three) },
        `${STARTS} sessions each, one after another; servers start in parallel and are closed with each session`,
      ),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
