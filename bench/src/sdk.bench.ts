/**
 * `npm run bench -- sdk` (R-K1): 32 concurrent `query()` sessions in one process, each forking
 * two sub-agents, side by side with 32 concurrent `forkloop run` processes doing the same — memory
 * per session (while every session has its two sub-agents in flight) and time to first request.
 * The simulator runs in a process of its own and holds every sub-agent's reply until the figures
 * are read. First, the import of `@forkloop/sdk` side by side with the real Agent SDK's (R-V2: a
 * one-shot program waits for it before its first message).
 */
import { execFileSync, fork, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { query } from "@forkloop/sdk";
import { type BenchResult, compare, percentile } from "./harness.js";
import type { SimProcessMessage } from "./sdk-sim-process.js";

const SESSIONS = 32;
const CLI = fileURLToPath(new URL("../../apps/cli/dist/main.js", import.meta.url));
const SIM_PROCESS = fileURLToPath(new URL("./sdk-sim-process.js", import.meta.url));
const FORKLOOP_SDK = new URL("../../packages/sdk/dist/index.js", import.meta.url).href;
/** The conformance harness's pinned Agent SDK (installed at test time, never committed). */
const ENSURE_PEERS = fileURLToPath(
  new URL("../../test/conformance/support/ensure-peers.mjs", import.meta.url),
);
const AGENT_SDK = new URL(
  "../../test/conformance/peers/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs",
  import.meta.url,
).href;
const IMPORT_ROUNDS = 9;

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
  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the simulator process exited (${code})`)));
    child.on("message", (message: SimProcessMessage) => {
      if (message.type === "listening") resolve(message.url);
      if (message.type === "first_request") firstRequestAt.set(message.session, message.at);
      if (message.type === "sub_agent_waiting") subAgentsWaiting++;
    });
  });
  return {
    url,
    firstRequestAt,
    subAgentsWaiting: () => subAgentsWaiting,
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
