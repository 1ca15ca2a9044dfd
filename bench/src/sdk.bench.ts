/**
 * `npm run bench -- sdk` (R-K1): 32 concurrent `query()` sessions in one process, each forking
 * two sub-agents, side by side with 32 concurrent `forkloop run` processes doing the same — memory
 * per session (while every session has its two sub-agents in flight) and time to first request.
 * The simulator runs in a process of its own and holds every sub-agent's reply until the figures
 * are read. Then 1, 16 and 64 concurrent `query()` sessions beside the real Agent SDK's, each held
 * at its first request (PSS per session). First, the import of `@forkloop/sdk` side by side with
 * the real Agent SDK's, and a one-shot program on each from its process's spawn to its first model
 * request (startup.bench.ts's runs, R-V2: a one-shot program waits for both before its first
 * message) — every figure of the SDK's goals in one run.
 */
import { execFileSync, fork, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { query } from "@forkloop/sdk";
import { type BenchResult, compare, percentile } from "./harness.js";
import type { SimProcessMessage } from "./sdk-sim-process.js";
import { oneShotRuns } from "./startup.bench.js";

const SESSIONS = 32;
const CLI = fileURLToPath(new URL("../../apps/cli/dist/main.js", import.meta.url));
const SIM_PROCESS = fileURLToPath(new URL("./sdk-sim-process.js", import.meta.url));
/** The published entry (package.json exports: the bundle, scripts/bundle-package.mjs). */
const FORKLOOP_SDK = new URL("../../packages/sdk/bundle/index.js", import.meta.url).href;
/** The conformance harness's pinned Agent SDK (installed at test time, never committed). */
const ENSURE_PEERS = fileURLToPath(
  new URL("../../test/conformance/support/ensure-peers.mjs", import.meta.url),
);
const AGENT_SDK = new URL(
  "../../test/conformance/peers/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs",
  import.meta.url,
).href;
const IMPORT_ROUNDS = 9;
/** Concurrent sessions of the side-by-side memory figures (the goal: ≤ 0.05× the Agent SDK's at 16). */
const MEMORY_SESSIONS = [1, 16, 64] as const;
/** Alternating one-shot runs of each SDK (startup.bench.ts's program and simulator). */
const ONE_SHOT_ROUNDS = 7;

/** Milliseconds a fresh node process spends in `await import(url)` (its own clock, around the import). */
function importMs(url: string): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(url)}); process.stdout.write(String(performance.now() - t));`;
  return Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }));
}

/** Median import time of each SDK, measured in alternating fresh processes so load shifts hit both. */
export function importTimes(
  rounds = IMPORT_ROUNDS,
  forkloopUrl = FORKLOOP_SDK,
): { forkloopMs: number; agentSdkMs: number } {
  execFileSync(process.execPath, [ENSURE_PEERS], { stdio: "ignore" });
  const forkloop: number[] = [];
  const agentSdk: number[] = [];
  importMs(forkloopUrl);
  importMs(AGENT_SDK);
  for (let round = 0; round < rounds; round++) {
    forkloop.push(importMs(forkloopUrl));
    agentSdk.push(importMs(AGENT_SDK));
  }
  return { forkloopMs: percentile(forkloop, 50), agentSdkMs: percentile(agentSdk, 50) };
}

function memAvailableKb(): number {
  return Number(/MemAvailable:\s+(\d+) kB/.exec(readFileSync("/proc/meminfo", "utf8"))?.[1] ?? Number.NaN);
}

function pssKb(pid: number | "self"): number {
  try {
    return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

async function until(condition: () => boolean, what: string, timeoutMs = 240_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The simulator in a child process (`sdk-sim-process.ts`); resolves once it listens. */
async function startSimProcess() {
  const child = fork(SIM_PROCESS, [], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
  const firstRequestAt = new Map<number, number>();
  let subAgentsWaiting = 0;
  const held = new Set<number>();
  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the simulator process exited (${code})`)));
    child.on("message", (message: SimProcessMessage) => {
      if (message.type === "listening") resolve(message.url);
      if (message.type === "first_request") firstRequestAt.set(message.session, message.at);
      if (message.type === "sub_agent_waiting") subAgentsWaiting++;
      if (message.type === "held") held.add(message.session);
    });
  });
  return {
    url,
    pid: child.pid,
    firstRequestAt,
    subAgentsWaiting: () => subAgentsWaiting,
    held: () => held.size,
    release: () => child.send("release"),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.send("close");
      }),
  };
}

/** One round: `start(index)` launches session `index`; returns memory per session and first-request times. */
async function round(
  label: string,
  start: (
    index: number,
    env: Record<string, string>,
  ) => { done: Promise<void>; pid?: () => number | undefined },
): Promise<{ memoryMiB: number; pssMiB: number; firstRequestMs: number[] }> {
  const sim = await startSimProcess();
  const env = { ANTHROPIC_API_KEY: "bench-key", ANTHROPIC_BASE_URL: sim.url };
  try {
    await settle();
    const availableBefore = memAvailableKb();
    const pssBefore = pssKb("self");
    const startedAt: number[] = [];
    const runs = Array.from({ length: SESSIONS }, (_, index) => {
      startedAt[index] = performance.timeOrigin + performance.now();
      return start(index, env);
    });
    await until(
      () => sim.subAgentsWaiting() >= 2 * SESSIONS,
      `${label}: ${2 * SESSIONS} sub-agents in flight`,
    );
    await settle();
    const memoryMiB = (availableBefore - memAvailableKb()) / SESSIONS / 1024;
    const childPss = runs.reduce(
      (sum, run) => sum + (run.pid?.() === undefined ? 0 : pssKb(run.pid() ?? 0)),
      0,
    );
    const pssMiB = (pssKb("self") - pssBefore + childPss) / SESSIONS / 1024;
    sim.release();
    await Promise.all(runs.map((run) => run.done));
    const firstRequestMs = startedAt.map((at, index) => (sim.firstRequestAt.get(index) ?? Number.NaN) - at);
    return { memoryMiB, pssMiB, firstRequestMs };
  } finally {
    await sim.close();
  }
}

/** Every process below `pid` (its children, theirs, …), from /proc's children lists. */
function descendants(pid: number): number[] {
  const found: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return found; // gone meanwhile
  }
  for (const task of tasks) {
    let children = "";
    try {
      children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8");
    } catch {
      continue;
    }
    for (const child of children.split(/\s+/).filter(Boolean).map(Number)) {
      found.push(child, ...descendants(child));
    }
  }
  return found;
}

/**
 * PSS per session with `sessions` sessions held at their first model request: this process's
 * growth plus every process the sessions started (the Agent SDK runs a Claude Code process per
 * session; forkloop's `query()` runs in this one). The simulator's process is not counted.
 */
async function heldSessionsPssMiB(
  label: string,
  sessions: number,
  start: (index: number, url: string) => Promise<void>,
): Promise<number> {
  const sim = await startSimProcess();
  try {
    await settle();
    const notSessions = new Set([sim.pid, ...(sim.pid === undefined ? [] : descendants(sim.pid))]);
    const before = pssKb("self");
    const runs = Array.from({ length: sessions }, (_, index) => start(index, sim.url));
    // A Claude Code process per session: 64 of them start slowly on a loaded machine.
    await until(
      () => sim.held() >= sessions,
      `${label}: ${sessions} sessions held at their first request`,
      Math.max(240_000, sessions * 8_000),
    );
    await settle();
    const started = descendants(process.pid).filter((pid) => !notSessions.has(pid));
    const pss = pssKb("self") - before + started.reduce((sum, pid) => sum + pssKb(pid), 0);
    sim.release();
    await Promise.all(runs);
    return pss / sessions / 1024;
  } finally {
    await sim.close();
  }
}

type AgentSdkQuery = (args: {
  prompt: string;
  options: Record<string, unknown>;
}) => AsyncIterable<{ type: string; is_error?: boolean }>;

/**
 * Memory of `sessions` concurrent sessions, forkloop's `query()` beside the real Agent SDK's
 * (the conformance harness's pinned 0.3.333) on the same simulator: each session holds at its
 * first request. Exported so that a reduced size can be tried without the whole bench.
 */
export async function memoryBesideAgentSdk(
  sessions = 16,
): Promise<{ forkloopMiB: number; agentSdkMiB: number }> {
  execFileSync(process.execPath, [ENSURE_PEERS], { stdio: "ignore" });
  const agentSdkQuery = ((await import(AGENT_SDK)) as { query: AgentSdkQuery }).query;
  const dir = mkdtempSync(join(tmpdir(), "forkloop-bench-sdk-memory-"));
  const drain = async (messages: AsyncIterable<{ type: string; is_error?: boolean }>) => {
    for await (const message of messages) {
      if (message.type === "result" && message.is_error)
        throw new Error(`a session failed: ${JSON.stringify(message)}`);
    }
  };
  try {
    const forkloopMiB = await heldSessionsPssMiB("query()", sessions, (index, url) =>
      drain(
        query({
          prompt: `hold ${index}: say hello`,
          options: {
            cwd: dir,
            env: {
              ANTHROPIC_API_KEY: "bench-key",
              ANTHROPIC_BASE_URL: url,
              FORKLOOP_SIM_LATENCY: "none",
              HOME: dir,
            },
            stderr: () => {},
          },
        }),
      ),
    );
    const agentSdkMiB = await heldSessionsPssMiB("Agent SDK query()", sessions, (index, url) =>
      drain(
        agentSdkQuery({
          prompt: `hold ${index}: say hello`,
          options: {
            cwd: dir,
            // Claude Code offline and quiet, as in the conformance harness (support/isolated-run.ts).
            env: {
              PATH: process.env.PATH ?? "/usr/bin:/bin",
              HOME: dir,
              CLAUDE_CONFIG_DIR: join(dir, ".claude"),
              ANTHROPIC_API_KEY: "bench-key",
              ANTHROPIC_BASE_URL: url,
              CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
              DISABLE_TELEMETRY: "1",
              DISABLE_ERROR_REPORTING: "1",
              DISABLE_AUTOUPDATER: "1",
            },
            stderr: () => {},
          },
        }),
      ),
    );
    return { forkloopMiB, agentSdkMiB };
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
}

export async function run(): Promise<BenchResult[]> {
  const imports = importTimes();
  const importResult = compare(
    "sdk: import time, @forkloop/sdk vs the Agent SDK 0.3.333 (lower is better)",
    "await import() in a fresh process, median",
    "ms",
    { label: "@anthropic-ai/claude-agent-sdk", value: imports.agentSdkMs },
    { label: "@forkloop/sdk", value: imports.forkloopMs },
    `median of ${IMPORT_ROUNDS} alternating fresh processes each; goal ≤ 1.0×`,
  );
  const dir = mkdtempSync(join(tmpdir(), "forkloop-bench-sdk-"));
  try {
    const inProcess = await round("query()", (index, env) => ({
      done: (async () => {
        for await (const message of query({
          prompt: `session ${index}: split the work`,
          options: { cwd: dir, env: { ...env, FORKLOOP_SIM_LATENCY: "none", HOME: dir }, stderr: () => {} },
        })) {
          if (message.type === "result" && message.is_error)
            throw new Error(message.subtype === "success" ? message.result : message.errors.join("; "));
        }
      })(),
    }));
    const processes = await round("forkloop run", (index, env) => {
      const child = spawn(process.execPath, [CLI, "run", `session ${index}: split the work`], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", HOME: dir, ...env },
        stdio: ["ignore", "ignore", "ignore"],
      });
      return {
        pid: () => child.pid,
        done: new Promise<void>((resolve) => child.on("exit", () => resolve())),
      };
    });
    const beside: { sessions: number; forkloopMiB: number; agentSdkMiB: number }[] = [];
    for (const sessions of MEMORY_SESSIONS)
      beside.push({ sessions, ...(await memoryBesideAgentSdk(sessions)) });
    const oneShot = await oneShotRuns(["Agent SDK query()", "@forkloop/sdk query()"], ONE_SHOT_ROUNDS);
    const median = (samples: number[]) => percentile(samples, 50);
    const notes = `${SESSIONS} sessions, each forking 2 sub-agents (held in flight while memory is read); simulator in a process of its own`;
    return [
      importResult,
      compare(
        "sdk: memory per session, query() in one process vs a forkloop run process each (lower is better)",
        "MemAvailable drop per session",
        "MiB",
        { label: "32 forkloop run processes", value: processes.memoryMiB },
        { label: "32 query() sessions", value: inProcess.memoryMiB },
        notes,
      ),
      compare(
        "sdk: PSS per session, query() vs forkloop run processes (lower is better)",
        "PSS per session",
        "MiB",
        { label: "32 forkloop run processes", value: processes.pssMiB },
        { label: "32 query() sessions", value: inProcess.pssMiB },
        notes,
      ),
      compare(
        "sdk: one-shot query(), spawn to first model request, @forkloop/sdk vs the Agent SDK 0.3.333 (lower is better)",
        "median",
        "ms",
        {
          label: "Agent SDK 0.3.333 query()",
          value: percentile(
            oneShot["Agent SDK query()"].map((f) => f.firstRequestMs),
            50,
          ),
        },
        {
          label: "@forkloop/sdk query()",
          value: percentile(
            oneShot["@forkloop/sdk query()"].map((f) => f.firstRequestMs),
            50,
          ),
        },
        `median of ${ONE_SHOT_ROUNDS} alternating one-shot processes each (startup.bench.ts's program: one sub-agent call, the simulator in its own process); goal ≤ 0.5×`,
      ),
      ...beside.map(({ sessions, forkloopMiB, agentSdkMiB }) =>
        compare(
          `sdk: PSS per session, ${sessions} concurrent query() session${sessions === 1 ? "" : "s"}, @forkloop/sdk vs the Agent SDK 0.3.333 (lower is better)`,
          "PSS per session (the process and every process its sessions started)",
          "MiB",
          { label: "@anthropic-ai/claude-agent-sdk", value: agentSdkMiB },
          { label: "@forkloop/sdk", value: forkloopMiB },
          `${sessions} session${sessions === 1 ? "" : "s"} each held at its first request on one simulator (a process of its own, not counted); the Agent SDK runs a Claude Code process per session${sessions === 16 ? "; goal ≤ 0.05×" : ""}`,
        ),
      ),
      compare(
        "sdk: time to first request, median of 32 concurrent (lower is better)",
        "start → first model request",
        "ms",
        { label: "forkloop run process", value: median(processes.firstRequestMs) },
        { label: "query()", value: median(inProcess.firstRequestMs) },
        notes,
      ),
      compare(
        "sdk: time to first request, p95 of 32 concurrent (lower is better)",
        "start → first model request",
        "ms",
        { label: "forkloop run process", value: percentile(processes.firstRequestMs, 95) },
        { label: "query()", value: percentile(inProcess.firstRequestMs, 95) },
        notes,
      ),
    ];
  } finally {
    // A session's last writes (its transcript's close) may still land while the tree is removed.
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
}
