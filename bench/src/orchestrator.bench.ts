/**
 * Orchestrator headline figures (issue 6 "Done when"), each side by side in one run:
 * 1. fork start latency (`pool.run()` → the worker's first HTTP request), p50/p95, warm and cold
 *    pool, vs a fresh `node` process per sub-agent running the same sub-agent code;
 * 2. machine memory per concurrent sub-agent at 32 in flight (drop in MemAvailable), pool vs
 *    process-per-agent;
 * 3. cost-weighted input tokens (uncached ×1, write ×1.25, read ×0.1) of a compact fork, a
 *    session-memory fork and a 16-way fan-out: CacheSafeParams (+ warming) vs naive forks with
 *    their own system prompt and no warming;
 * 4. transcript append throughput and resume load time, msgpackr records vs JSON lines.
 * All model traffic goes to the simulator (packages/sim), never a real model.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { CacheSafeParams, Message, MessageParam } from "@forkloop/loop-core";
import {
  buildForkDirective,
  createAgentPool,
  createPoolCompactRunner,
  loadTranscript,
  type SubAgentTask,
  TranscriptWriter,
  toForkHistory,
} from "@forkloop/orchestrator";
import { testCacheSafeParams, testTask } from "@forkloop/orchestrator/testing";
import { type Brain, type RequestRecord, type Simulator, startSimulator } from "@forkloop/sim";
import { type BenchResult, compare, percentile } from "./harness.js";

const now = () => performance.timeOrigin + performance.now();
const orchestratorDist = dirname(fileURLToPath(import.meta.resolve("@forkloop/orchestrator")));
const runnerModule = pathToFileURL(join(orchestratorDist, "sub-agent-runner.js")).href;

/** The process-per-agent baseline: a fresh Node process runs the same runSubAgent() once. */
const CHILD = `
import Anthropic from "@anthropic-ai/sdk";
import { runSubAgent } from ${JSON.stringify(runnerModule)};
import { readFileSync } from "node:fs";
const task = JSON.parse(readFileSync(process.argv[1], "utf8"));
const client = new Anthropic({ apiKey: "bench-key", baseURL: process.env.FORKLOOP_BENCH_URL });
await runSubAgent(task, { client, signal: new AbortController().signal, emit() {},
  async callParentTool() { return { content: "unavailable", isError: true }; },
  steeringQueue: [], cancelled: () => false });
`;

function spawnAgentProcess(task: SubAgentTask, url: string, dir: string): ChildProcess {
  // The task is ~100 KB of JSON (tools, system prompt): too big for an environment variable.
  const taskFile = join(dir, `${task.id}.json`);
  writeFileSync(taskFile, JSON.stringify(task));
  // cwd = the orchestrator package, so the child resolves the SDK from the workspace.
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD, taskFile], {
    cwd: orchestratorDist,
    env: { ...process.env, FORKLOOP_BENCH_URL: url },
    stdio: ["ignore", "ignore", "inherit"],
  });
  return child;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve();
    else child.on("exit", () => resolve());
  });
}

function memAvailableKb(): number {
  const match = /MemAvailable:\s+(\d+) kB/.exec(readFileSync("/proc/meminfo", "utf8"));
  return Number(match?.[1] ?? Number.NaN);
}

/** Proportional set size of a process (shared pages split between their users): kB. */
function pssKb(pid: number | "self"): number {
  const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
  return Number(match?.[1] ?? Number.NaN);
}

function messageRequests(sim: Simulator): RequestRecord[] {
  return sim.requests().filter((record) => record.path === "/v1/messages");
}

function weighted(records: readonly RequestRecord[]): number {
  return records.reduce(
    (sum, record) =>
      sum +
      (record.usage
        ? record.usage.input_tokens +
          record.usage.cache_creation_input_tokens * 1.25 +
          record.usage.cache_read_input_tokens * 0.1
        : 0),
    0,
  );
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

// ---------------------------------------------------------------- 1. fork start latency
async function forkLatency(dir: string): Promise<BenchResult[]> {
  const sim = await startSimulator({
    brain: () => ({ content: [{ type: "text", text: "ok" }] }),
    clock: now,
  });
  const endpoint = { apiKey: "bench-key", baseURL: sim.url };
  const task = (id: string) => testTask({ id, cwd: dir, workspaceRoots: [dir] });
  const firstRequestAfter = async (start: number, count: number) => {
    await waitFor(() => messageRequests(sim).length >= count, `request ${count}`);
    return (messageRequests(sim)[count - 1]?.startedAt ?? Number.NaN) - start;
  };
  /** Launches `count` sub-agents one after another; each sample is launch → its first request. */
  const sample = async (count: number, launch: (index: number) => Promise<unknown>) => {
    const samples: number[] = [];
    for (let index = 0; index < count; index++) {
      const before = messageRequests(sim).length;
      const start = now();
      const done = launch(index);
      samples.push(await firstRequestAfter(start, before + 1));
      await done;
    }
    return samples;
  };
  try {
    const pool = createAgentPool({ endpoint, maxThreads: 1 });
    await sample(2, (index) => pool.run(task(`warmup-${index}`)).result);
    const warm = await sample(40, (index) => pool.run(task(`warm-${index}`)).result);
    await pool.close();
    // Cold: a new pool per sample, so the thread start and module loading are in the figure.
    const cold = await sample(8, async (index) => {
      const coldPool = createAgentPool({ endpoint, maxThreads: 1 });
      await coldPool.run(task(`cold-${index}`)).result;
      await coldPool.close();
    });
    const processes = await sample(8, (index) =>
      exited(spawnAgentProcess(task(`process-${index}`), sim.url, dir)),
    );
    const note = `samples: warm ${warm.length}, cold ${cold.length}, process ${processes.length}; fork() → first HTTP request at the simulator`;
    const baseline = (p: number) => ({ label: "node process per agent", value: percentile(processes, p) });
    const sides = [
      { kind: "warm pool", label: "warm worker pool", samples: warm },
      { kind: "cold pool", label: "new pool (thread start)", samples: cold },
    ];
    return sides.flatMap(({ kind, label, samples }) =>
      [50, 95].map((p) =>
        compare(
          `fork start latency, ${kind} (lower is better)`,
          `p${p}`,
          "ms",
          baseline(p),
          { label, value: percentile(samples, p) },
          note,
        ),
      ),
    );
  } finally {
    await sim.close();
  }
}

// ---------------------------------------------------------------- 2. memory at 32 concurrent
async function memoryPerAgent(dir: string): Promise<BenchResult[]> {
  const CONCURRENT = 32;
  let release!: () => void;
  let gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  // Every reply waits for the gate, so all 32 sub-agents are in flight when memory is read.
  const brain: Brain = async () => {
    await gate;
    return { content: [{ type: "text", text: "ok" }] };
  };
  const sim = await startSimulator({ brain });
  const task = (id: string) => testTask({ id, cwd: dir, workspaceRoots: [dir] });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
  try {
    await settle();
    const poolBefore = memAvailableKb();
    const poolPssBefore = pssKb("self");
    const pool = createAgentPool({
      endpoint: { apiKey: "bench-key", baseURL: sim.url },
      maxThreads: 2,
      concurrentTasksPerWorker: 16,
    });
    const handles = Array.from({ length: CONCURRENT }, (_, index) => pool.run(task(`mem-pool-${index}`)));
    await waitFor(() => messageRequests(sim).length >= CONCURRENT, `${CONCURRENT} requests in flight`);
    await settle();
    const poolDrop = (poolBefore - memAvailableKb()) / CONCURRENT / 1024;
    // This process also hosts the simulator, so the pool's figure includes its 32 open requests.
    const poolPss = (pssKb("self") - poolPssBefore) / CONCURRENT / 1024;
    release();
    await Promise.all(handles.map((handle) => handle.result));
    await pool.close();

    gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    sim.clearRequests();
    await settle();
    const processBefore = memAvailableKb();
    const children = Array.from({ length: CONCURRENT }, (_, index) =>
      spawnAgentProcess(task(`mem-proc-${index}`), sim.url, dir),
    );
    await waitFor(() => messageRequests(sim).length >= CONCURRENT, `${CONCURRENT} requests in flight`);
    await settle();
    const processDrop = (processBefore - memAvailableKb()) / CONCURRENT / 1024;
    const processPss =
      children.reduce((sum, child) => sum + (child.pid === undefined ? 0 : pssKb(child.pid)), 0) /
      CONCURRENT /
      1024;
    release();
    await Promise.all(children.map(exited));
    return [
      compare(
        "memory per concurrent sub-agent at 32 (lower is better)",
        "PSS added / agent",
        "MiB",
        { label: "node process per agent (sum of their PSS)", value: processPss },
        { label: "worker pool, 2 threads × 16 (growth of this process's PSS)", value: poolPss },
        "PSS splits shared pages between processes, so it is a fair per-process figure; the pool's side includes its two threads and the simulator's open requests",
      ),
      compare(
        "memory per concurrent sub-agent at 32, machine-wide (lower is better)",
        "MemAvailable drop / agent",
        "MiB",
        { label: "node process per agent", value: processDrop },
        { label: "worker pool (2 threads × 16)", value: poolDrop },
        "32 sub-agents each waiting on an open simulator request; machine-wide figure, other processes add noise",
      ),
    ];
  } finally {
    release();
    await sim.close();
  }
}

// ---------------------------------------------------------------- 3. cost-weighted input tokens
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

async function cacheCost(dir: string): Promise<BenchResult[]> {
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

// ---------------------------------------------------------------- 4. transcripts
function sampleMessages(count: number): Message[] {
  const messages: Message[] = [];
  for (let index = 0; index < count; index++) {
    const parentUuid = index === 0 ? null : `m${index - 1}`;
    const timestamp = new Date(1_700_000_000_000 + index).toISOString();
    if (index % 2 === 0) {
      messages.push({
        type: "assistant",
        uuid: `m${index}`,
        parentUuid,
        timestamp,
        message: {
          id: `msg_${index}`,
          type: "message",
          role: "assistant",
          model: "claude-sonnet-5",
          content: [
            { type: "text", text: `Reading the file ${index}.`, citations: null },
            {
              type: "tool_use",
              id: `toolu_${index}`,
              name: "Read",
              input: { file_path: `/repo/src/file-${index}.ts` },
            },
          ],
          stop_reason: "tool_use",
          stop_sequence: null,
          usage: {
            input_tokens: 12,
            output_tokens: 40,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 9000,
          },
        } as unknown as Extract<Message, { type: "assistant" }>["message"],
      });
    } else {
      const lines = Array.from(
        { length: 40 },
        (_, line) => `${String(line + 1).padStart(6)}\tconst value${line} = compute(${line});`,
      );
      messages.push({
        type: "user",
        uuid: `m${index}`,
        parentUuid,
        timestamp,
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: `toolu_${index - 1}`, content: lines.join("\n") }],
        },
      });
    }
  }
  return messages;
}

async function transcripts(dir: string): Promise<BenchResult[]> {
  const messages = sampleMessages(4_000);
  const binaryPath = join(dir, "bench.fltr");
  const jsonPath = join(dir, "bench.jsonl");
  // Best of several rounds: the machine is shared, and the fastest round is the least disturbed.
  const rounds = 7;
  let binaryAppend = Number.POSITIVE_INFINITY;
  let jsonAppend = Number.POSITIVE_INFINITY;
  let binaryLoad = Number.POSITIVE_INFINITY;
  let jsonLoad = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) {
    rmSync(binaryPath, { force: true });
    rmSync(jsonPath, { force: true });
    let start = performance.now();
    const writer = new TranscriptWriter(binaryPath);
    for (const message of messages) writer.append({ type: "message", message });
    writer.close();
    binaryAppend = Math.min(binaryAppend, performance.now() - start);

    start = performance.now();
    const fd = openSync(jsonPath, "a");
    for (const message of messages) writeSync(fd, `${JSON.stringify({ type: "message", message })}\n`);
    closeSync(fd);
    jsonAppend = Math.min(jsonAppend, performance.now() - start);

    start = performance.now();
    const loaded = await loadTranscript(binaryPath);
    binaryLoad = Math.min(binaryLoad, performance.now() - start);
    if (loaded.messages.length !== messages.length) throw new Error("msgpackr transcript lost messages");

    start = performance.now();
    const parsed = readFileSync(jsonPath, "utf8")
      .split("\n")
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as { message: Message });
    jsonLoad = Math.min(jsonLoad, performance.now() - start);
    if (parsed.length !== messages.length) throw new Error("JSON lines transcript lost messages");
  }
  const perSecond = (ms: number) => messages.length / (ms / 1000);
  const sizes = `file size: msgpackr ${(statSync(binaryPath).size / 1e6).toFixed(2)} MB, JSON lines ${(statSync(jsonPath).size / 1e6).toFixed(2)} MB; ${messages.length} messages, best of ${rounds} rounds`;
  return [
    compare(
      "transcript append throughput (higher is better)",
      "records/s",
      "records/s",
      { label: "JSON lines", value: perSecond(jsonAppend) },
      { label: "msgpackr records (len+crc32)", value: perSecond(binaryAppend) },
      sizes,
    ),
    compare(
      "transcript resume load (lower is better)",
      "load time",
      "ms",
      { label: "JSON lines", value: jsonLoad },
      { label: "msgpackr records (len+crc32)", value: binaryLoad },
      sizes,
    ),
  ];
}

/** `FORKLOOP_BENCH_ORCHESTRATOR=latency,cost` runs only those parts (default: all four). */
const SECTIONS = {
  latency: forkLatency,
  memory: memoryPerAgent,
  cost: cacheCost,
  transcripts,
} as const;

export async function run(): Promise<BenchResult[]> {
  const only = process.env.FORKLOOP_BENCH_ORCHESTRATOR?.split(",");
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-bench-orch-")));
  const results: BenchResult[] = [];
  try {
    for (const [name, section] of Object.entries(SECTIONS)) {
      if (only && !only.includes(name)) continue;
      const started = performance.now();
      results.push(...(await section(dir)));
      process.stderr.write(`[orchestrator ${name} ${((performance.now() - started) / 1000).toFixed(1)} s] `);
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
