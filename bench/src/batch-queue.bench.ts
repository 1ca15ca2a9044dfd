/**
 * Distributed batches (R-B1): the same latency-bound 1,000-item batch (simulator
 * TTFT 1 s, one turn per item) run by `forkloop batch --queue` on a real redis-server with 1, 2
 * and 4 `forkloop worker` processes, each at concurrency 8, against one shared simulator:
 *   1. for each, achieved throughput vs the latency-bound ideal (8 × W items always in flight,
 *      each taking exactly the model time the simulator charged: TTFT + output at 200 tok/s),
 *      end to end (the producer's spawn to its exit: its start, the enqueue, the last report) and
 *      while the queue runs (the first model request to the last response, the simulator's clock);
 *   2. the fixed start: the producer's spawn to the first model request, queue vs local journal;
 *   3. the queue's overhead per item (wall time beyond the ideal, per item) vs the local journal's
 *      (`forkloop batch` without --queue at concurrency 8), both on one process.
 *   4. the same throughput with 4 workers on 4 network hosts (R-V3): Linux network namespaces
 *      cabled to one switch, Redis and the producer on a fifth host, the simulator on the machine
 *      (network-hosts.ts; only where namespaces can be made, i.e. as root).
 * Workers are started (and idle) before the producer, so the wall time is the producer's: enqueue
 * to the last result written. Every reply comes from the simulator, not a real model.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { canMakeHosts, type NetworkHosts, startNetworkHosts, startRedisServer } from "@forkloop/cli/testing";
import { type LatencyModel, startSimulator } from "@forkloop/sim";
import { type BenchResult, compare } from "./harness.js";

const CLI = fileURLToPath(new URL("../../apps/cli/dist/main.js", import.meta.url));
const ITEMS = 1_000;
// 8 per worker keeps 4 workers (32 in flight) latency-bound on a 2-core machine shared with the
// simulator; at 32 per worker, 4 workers are CPU-bound here and the ratio measures the cores.
const CONCURRENCY = 8;
const WORKER_COUNTS = [1, 2, 4] as const;
/** The worker hosts of the network run (R-V3), one worker each. */
const HOSTS = ["w1", "w2", "w3", "w4"] as const;
const TTFT_MS = 1_000;
const OUTPUT_TOKENS_PER_SECOND = 200;
const LATENCY: LatencyModel = {
  default: { ttftMs: TTFT_MS, prefillTokensPerSecond: 1e12, outputTokensPerSecond: OUTPUT_TOKENS_PER_SECOND },
};

/** The CLI, run under `launcher` (a network host's `ip netns exec …`) when one is given. */
function spawnCli(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, launcher: readonly string[]) {
  const [command, ...prefix] = [...launcher, process.execPath];
  return spawn(command as string, [...prefix, CLI, ...args], {
    cwd,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
}

/** Runs the CLI to exit 0; resolves with its spawn and exit times (epoch ms, the simulator's clock). */
function runToEnd(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  launcher: readonly string[] = [],
): Promise<{ startedAt: number; endedAt: number }> {
  const startedAt = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, cwd, env, launcher);
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4_000);
    });
    child.on("close", (code) =>
      code === 0
        ? resolve({ startedAt, endedAt: Date.now() })
        : reject(new Error(`forkloop ${args[0]} exited ${code}:\n${stderr}`)),
    );
  });
}

/** Starts a worker and resolves once it says it is taking items. */
function startWorker(
  cwd: string,
  env: NodeJS.ProcessEnv,
  url: string,
  launcher: readonly string[] = [],
): Promise<ChildProcess> {
  const child = spawnCli(
    ["worker", "--queue", url, "--concurrency", String(CONCURRENCY), "--state-dir", ".forkloop"],
    cwd,
    env,
    launcher,
  );
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      if (stderr.includes("running items from")) resolve(child);
    });
    child.on("exit", (code) => reject(new Error(`forkloop worker exited ${code} at start:\n${stderr}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

export async function run(): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), "forkloop-queue-bench-"));
  const possible = await canMakeHosts();
  if (!possible.ok) console.warn(`batch-queue: the network-hosts run is left out: ${possible.reason}`);
  const network: NetworkHosts | undefined = possible.ok
    ? await startNetworkHosts({ hosts: ["r", ...HOSTS], withMachine: true })
    : undefined;
  // On the machine's network address when there are hosts, so their workers reach it too.
  const sim = await startSimulator({
    latency: LATENCY,
    ...(network?.machineAddress ? { host: network.machineAddress } : {}),
  });
  const redis = await startRedisServer();
  try {
    const lines = Array.from({ length: ITEMS }, (_, index) => JSON.stringify(`task ${index + 1}`));
    await writeFile(join(dir, "items.jsonl"), `${lines.join("\n")}\n`);
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      ANTHROPIC_API_KEY: "bench-key",
      ANTHROPIC_BASE_URL: sim.url,
    };
    // The state in the bench's directory, where this reads the report.
    const batch = [
      "batch",
      "--items",
      "items.jsonl",
      "--prompt",
      "Answer {{item}}",
      "--state-dir",
      ".forkloop",
    ];

    /**
     * Wall time end to end and while the queue runs, and the ideal wall time for `inFlight` items
     * at once, from the simulator's request records.
     */
    const measure = async (id: string, inFlight: number, go: () => ReturnType<typeof runToEnd>) => {
      sim.clearRequests();
      const { startedAt, endedAt } = await go();
      const report = JSON.parse(
        await readFile(join(dir, ".forkloop", "batches", id, "report.json"), "utf8"),
      ) as {
        totals: { succeeded: number; turns: number };
      };
      if (report.totals.succeeded !== ITEMS)
        throw new Error(`batch ${id}: ${report.totals.succeeded}/${ITEMS} succeeded`);
      const served = sim
        .requests()
        .filter((record) => record.path === "/v1/messages" && record.status === 200);
      const modelMs = served.reduce(
        (sum, record) =>
          sum + TTFT_MS + ((record.usage?.output_tokens ?? 0) / OUTPUT_TOKENS_PER_SECOND) * 1000,
        0,
      );
      const firstRequest = Math.min(...served.map((record) => record.startedAt));
      const lastResponse = Math.max(...served.map((record) => record.endedAt ?? record.startedAt));
      return {
        wallMs: endedAt - startedAt,
        runningMs: lastResponse - firstRequest,
        startMs: firstRequest - startedAt,
        idealMs: modelMs / inFlight,
        turns: report.totals.turns,
      };
    };

    const local = await measure("local", CONCURRENCY, () =>
      runToEnd([...batch, "--concurrency", String(CONCURRENCY), "--id", "local"], dir, env),
    );
    type Run = { label: string; workers: number } & Awaited<ReturnType<typeof measure>>;
    const queued: Run[] = [];
    for (const workers of WORKER_COUNTS) {
      const processes = await Promise.all(
        Array.from({ length: workers }, () => startWorker(dir, env, redis.url)),
      );
      try {
        const id = `queued-${workers}`;
        queued.push({
          label: `${workers} worker process${workers === 1 ? "" : "es"}`,
          workers,
          ...(await measure(id, CONCURRENCY * workers, () =>
            runToEnd([...batch, "--queue", redis.url, "--id", id], dir, env),
          )),
        });
      } finally {
        await Promise.all(processes.map(stop));
      }
    }
    if (network) queued.push(await acrossHosts(network, dir, env, batch, measure));

    const perSecond = (ms: number) => ITEMS / (ms / 1000);
    const setup = `${ITEMS} items, simulator TTFT ${TTFT_MS} ms + ${OUTPUT_TOKENS_PER_SECOND} tok/s, one redis-server (AOF, fsync always); all processes on this machine's cores`;
    const results = queued.flatMap((run) => {
      const workers = run.label;
      const candidate = `forkloop worker × ${run.workers}${run.label.includes("hosts") ? " (hosts)" : ""}`;
      const ideal = { label: "ideal", value: perSecond(run.idealMs) };
      return [
        compare(
          `batch --queue, ${workers}: achieved vs ideal latency-bound throughput, end to end (higher is better, 1 = no overhead)`,
          "items/s",
          "items/s",
          ideal,
          { label: candidate, value: perSecond(run.wallMs) },
          `${run.turns} turns, ${run.workers} × concurrency ${CONCURRENCY}; the producer's spawn to its exit (${(run.startMs / 1000).toFixed(1)} s of it before the first request); ${setup}`,
        ),
        compare(
          `batch --queue, ${workers}: achieved vs ideal latency-bound throughput while the queue runs (higher is better, 1 = no overhead)`,
          "items/s",
          "items/s",
          ideal,
          { label: candidate, value: perSecond(run.runningMs) },
          `the first model request to the last response (the simulator's clock); ${setup}`,
        ),
      ];
    });
    const one = queued[0]!;
    results.push(
      compare(
        `batch --queue vs local journal: overhead per item beyond the latency-bound ideal, one process at concurrency ${CONCURRENCY} (lower is better)`,
        "overhead per item",
        "ms",
        { label: "local journal", value: (local.wallMs - local.idealMs) / ITEMS },
        { label: "BullMQ (1 worker)", value: (one.wallMs - one.idealMs) / ITEMS },
        `wall ${(local.wallMs / 1000).toFixed(1)} s vs ${(one.wallMs / 1000).toFixed(1)} s; ideal ${(local.idealMs / 1000).toFixed(1)} s vs ${(one.idealMs / 1000).toFixed(1)} s`,
      ),
      compare(
        "batch --queue vs local journal: the fixed start, the command's spawn to the first model request (lower is better)",
        "start",
        "ms",
        { label: "local journal", value: local.startMs },
        { label: "BullMQ (1 worker)", value: one.startMs },
        "the queue's includes connecting to Redis, storing the batch and adding its flow, and a worker taking the first item",
      ),
    );
    return results;
  } finally {
    await redis.stop();
    await sim.close();
    await network?.remove();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The 4-worker run again with each worker on its own network host and Redis and the producer on
 * another (R-V3): every queue message crosses a veth cable and the switch.
 */
async function acrossHosts<T>(
  network: NetworkHosts,
  dir: string,
  env: NodeJS.ProcessEnv,
  batch: readonly string[],
  measure: (id: string, inFlight: number, go: () => ReturnType<typeof runToEnd>) => Promise<T>,
): Promise<{ label: string; workers: number } & T> {
  const redis = await startRedisServer({ launcher: network.launcher("r"), bind: network.address("r") });
  const processes = await Promise.all(
    HOSTS.map((host) => startWorker(dir, env, redis.url, network.launcher(host))),
  );
  try {
    const result = await measure("hosts-4", CONCURRENCY * HOSTS.length, () =>
      runToEnd([...batch, "--queue", redis.url, "--id", "hosts-4"], dir, env, network.launcher("r")),
    );
    return { label: `${HOSTS.length} worker hosts on a network`, workers: HOSTS.length, ...result };
  } finally {
    await Promise.all(processes.map(stop));
    await redis.stop();
  }
}
