/**
 * `npm run bench -- scale` (R-V3): forkloop at scale on one host, the simulator in a process of
 * its own so the measured process carries none of its memory or CPU.
 *   1. Live agents: 1,000 concurrent `query()` sessions of `@forkloop/sdk` in one process, each held
 *      at its first request by the simulator so all are live at once. Memory per live agent is the
 *      growth of that process's PSS from 10 live sessions to 1,000, per added session; time to first
 *      request is each session's `query()` call to its first request at the simulator.
 *   2. A 10,000-item batch: the built `forkloop batch` at concurrency 128, one turn per item, the
 *      simulator answering after a 2 s time to first token. The batch process's RSS is sampled every
 *      second beside the count of items answered; the growth from 20 % of the items to the end shows
 *      whether anything is held per item. Throughput is compared with the latency-bound ideal: 128
 *      items always in flight, each taking exactly the simulator's 2 s. FORKLOOP_BENCH_SCALE_ITEMS sets
 *      a smaller batch for a check on a busy machine (its figures are not the goal's).
 * Every reply comes from the simulator, not a real model.
 */
import { type ChildProcess, fork, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LatencyModel } from "@forkloop/sim";
import { type BenchResult, compare, percentile } from "./harness.js";
import type { ScaleSessionsMessage } from "./scale-sessions-process.js";
import type { ScaleSimMessage } from "./scale-sim-process.js";

const CLI = fileURLToPath(new URL("../../apps/cli/dist/main.js", import.meta.url));
const SIM_PROCESS = fileURLToPath(new URL("./scale-sim-process.js", import.meta.url));
const SESSIONS_PROCESS = fileURLToPath(new URL("./scale-sessions-process.js", import.meta.url));

const LIVE_AGENTS = 1_000;
const FEW_AGENTS = 10;
const ITEMS = Number(process.env.FORKLOOP_BENCH_SCALE_ITEMS ?? 10_000);
const CONCURRENCY = 128;
const TTFT_MS = 2_000;
// Prefill and output effectively instant, so every request takes exactly TTFT_MS of model time.
const BATCH_LATENCY: LatencyModel = {
  default: { ttftMs: TTFT_MS, prefillTokensPerSecond: 1e12, outputTokensPerSecond: 1e12 },
};

const epochMs = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function procField(pid: number, file: "smaps_rollup" | "status", field: RegExp): Promise<number> {
  try {
    return Number(field.exec(await readFile(`/proc/${pid}/${file}`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
const pssKiB = (pid: number) => procField(pid, "smaps_rollup", /^Pss:\s+(\d+) kB/m);
const rssKiB = (pid: number) => procField(pid, "status", /VmRSS:\s+(\d+) kB/);

/** A child that speaks over IPC: its messages of one type, awaited in order. */
function messages<M extends { type: string }>(child: ChildProcess) {
  const seen: M[] = [];
  const waiters: { type: string; resolve: (message: M) => void }[] = [];
  child.on("message", (message: M) => {
    const index = waiters.findIndex((waiter) => waiter.type === message.type);
    if (index >= 0) waiters.splice(index, 1)[0]?.resolve(message);
    else seen.push(message);
  });
  return <T extends M["type"]>(type: T): Promise<Extract<M, { type: T }>> => {
    const index = seen.findIndex((message) => message.type === type);
    if (index >= 0) return Promise.resolve(seen.splice(index, 1)[0] as Extract<M, { type: T }>);
    return new Promise((resolve, reject) => {
      waiters.push({ type, resolve: resolve as (message: M) => void });
      child.once("exit", (code) => reject(new Error(`${type}: the process exited (${code})`)));
    });
  };
}

async function startSim(latency: LatencyModel | "none", hold: boolean) {
  const child = fork(SIM_PROCESS, [JSON.stringify(latency), hold ? "hold" : "free"], {
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const next = messages<ScaleSimMessage>(child);
  const { url } = await next("listening");
  return {
    url,
    stats: () => {
      child.send("stats");
      return next("stats");
    },
    firstRequests: () => {
      child.send("first_requests");
      return next("first_requests");
    },
    release: () => child.send("release"),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.send("close");
      }),
  };
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** `count` live `query()` sessions in one process: its PSS with all of them held, and each first request's delay. */
async function liveSessions(count: number, dir: string) {
  const sim = await startSim("none", true);
  const child = fork(SESSIONS_PROCESS, [String(count), dir], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      ANTHROPIC_API_KEY: "bench-key",
      ANTHROPIC_BASE_URL: sim.url,
    },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const next = messages<ScaleSessionsMessage>(child);
  try {
    const started = await next("started");
    await until(async () => (await sim.stats()).arrived >= count, `${count} sessions' first requests`);
    await sleep(1_000);
    const pss = await pssKiB(child.pid ?? 0);
    const { at } = await sim.firstRequests();
    sim.release();
    const { failed } = await next("done");
    if (failed > 0) throw new Error(`${failed} of ${count} sessions failed`);
    const firstRequestMs = started.at.map((startedAt, index) => (at[index] ?? Number.NaN) - startedAt);
    return { pssMiB: pss / 1024, firstRequestMs };
  } finally {
    child.kill();
    await sim.close();
  }
}

/** The 10,000-item batch: RSS samples against items answered, and wall time. */
async function bigBatch(dir: string) {
  const sim = await startSim(BATCH_LATENCY, false);
  try {
    const lines = Array.from({ length: ITEMS }, (_, index) => JSON.stringify(`task ${index + 1}`));
    await writeFile(join(dir, "items.jsonl"), `${lines.join("\n")}\n`);
    const startedAt = epochMs();
    const child = spawn(
      process.execPath,
      [
        CLI,
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Answer {{item}}",
        "--concurrency",
        String(CONCURRENCY),
        "--no-isolate",
        "--state-dir",
        ".forkloop",
        "--id",
        "scale",
      ],
      {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: dir,
          ANTHROPIC_API_KEY: "bench-key",
          ANTHROPIC_BASE_URL: sim.url,
        },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4_000);
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    const samples: { answered: number; rssKiB: number }[] = [];
    let running = true;
    void exited.then(() => {
      running = false;
    });
    while (running) {
      const [stats, rss] = await Promise.all([sim.stats(), rssKiB(child.pid ?? 0)]);
      if (running && rss > 0) samples.push({ answered: stats.answered, rssKiB: rss });
      await Promise.race([sleep(1_000), exited]);
    }
    const code = await exited;
    const wallMs = epochMs() - startedAt;
    if (code !== 0) throw new Error(`forkloop batch exited ${code}:\n${stderr}`);
    const report = JSON.parse(
      await readFile(join(dir, ".forkloop", "batches", "scale", "report.json"), "utf8"),
    ) as {
      totals: { succeeded: number };
    };
    if (report.totals.succeeded !== ITEMS)
      throw new Error(`${report.totals.succeeded}/${ITEMS} items succeeded`);
    const { firstArrivalAt, lastEndedAt } = await sim.stats();
    return { wallMs, runningMs: lastEndedAt - firstArrivalAt, samples };
  } finally {
    await sim.close();
  }
}

/** The median RSS of the samples taken while `from`–`to` of the items had been answered (MiB). */
function medianRss(
  samples: readonly { answered: number; rssKiB: number }[],
  from: number,
  to: number,
): number {
  const window = samples.filter((sample) => sample.answered >= from * ITEMS && sample.answered <= to * ITEMS);
  return (
    percentile(
      window.map((sample) => sample.rssKiB),
      50,
    ) / 1024
  );
}

export async function run(): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), "forkloop-scale-bench-"));
  try {
    const few = await liveSessions(FEW_AGENTS, dir);
    const many = await liveSessions(LIVE_AGENTS, dir);
    const perAgentMiB = (many.pssMiB - few.pssMiB) / (LIVE_AGENTS - FEW_AGENTS);
    const batch = await bigBatch(dir);
    const idealMs = (ITEMS / CONCURRENCY) * TTFT_MS;
    const perSecond = (ms: number) => ITEMS / (ms / 1000);
    const early = medianRss(batch.samples, 0.2, 0.3);
    const late = medianRss(batch.samples, 0.9, 1);
    const peak = Math.max(...batch.samples.map((sample) => sample.rssKiB)) / 1024;
    const liveNotes = `${LIVE_AGENTS} query() sessions in one process, each held at its first request by the simulator (a process of its own); PSS ${few.pssMiB.toFixed(0)} MiB at ${FEW_AGENTS} live, ${many.pssMiB.toFixed(0)} MiB at ${LIVE_AGENTS}; goal ≤ 2 MiB per live agent`;
    const batchNotes = `${ITEMS} items, one turn each, concurrency ${CONCURRENCY}, simulator TTFT ${TTFT_MS} ms in a process of its own; ${batch.samples.length} RSS samples, one a second; peak ${peak.toFixed(0)} MiB`;
    return [
      {
        name: `scale: memory per live agent, ${LIVE_AGENTS} concurrent query() sessions in one process (lower is better)`,
        metric: `PSS growth from ${FEW_AGENTS} to ${LIVE_AGENTS} live, per added session`,
        value: perAgentMiB,
        unit: "MiB",
        notes: liveNotes,
      },
      compare(
        `scale: time to first request with ${LIVE_AGENTS} sessions started at once, p50 vs p95 (lower is better)`,
        "query() call → its first request at the simulator",
        "ms",
        { label: "p50", value: percentile(many.firstRequestMs, 50) },
        { label: "p95", value: percentile(many.firstRequestMs, 95) },
        `with ${FEW_AGENTS} sessions: p50 ${percentile(few.firstRequestMs, 50).toFixed(0)} ms; ${liveNotes}`,
      ),
      compare(
        `scale: parent RSS over a ${ITEMS}-item batch, its last tenth vs 20–30 % of the items (lower is better; goal < 1.10×)`,
        "median RSS of the batch process",
        "MiB",
        { label: "while 20–30 % of the items were answered", value: early },
        { label: "while 90–100 % were", value: late },
        batchNotes,
      ),
      compare(
        `scale: a ${ITEMS}-item batch, achieved vs ideal latency-bound throughput, end to end (higher is better; goal ≥ 0.95)`,
        "items/s",
        "items/s",
        { label: `ideal: ${CONCURRENCY} in flight × ${TTFT_MS} ms each`, value: perSecond(idealMs) },
        { label: "forkloop batch", value: perSecond(batch.wallMs) },
        `the command's spawn to its exit (${(batch.wallMs / 1000).toFixed(0)} s vs ideal ${(idealMs / 1000).toFixed(0)} s), its start, the first request's cache warm-up (R-F4: the first wave waits for one response to start, one TTFT) and the report included; ${batchNotes}`,
      ),
      compare(
        `scale: a ${ITEMS}-item batch, achieved vs ideal latency-bound throughput while the items run (higher is better)`,
        "items/s",
        "items/s",
        { label: `ideal: ${CONCURRENCY} in flight × ${TTFT_MS} ms each`, value: perSecond(idealMs) },
        { label: "forkloop batch", value: perSecond(batch.runningMs) },
        `the first model request to the end of the last response (the simulator's clock, ${(batch.runningMs / 1000).toFixed(0)} s): the overhead per item without the fixed start and end; ${batchNotes}`,
      ),
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
