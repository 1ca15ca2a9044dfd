import { readFileSync } from "node:fs";
import { createAgentPool } from "@forkloop/orchestrator";
import { testTask } from "@forkloop/orchestrator/testing";
import { type Brain, startSimulator } from "@forkloop/sim";
import { type BenchResult, compare } from "../harness.js";
import { exited, spawnAgentProcess } from "./agent-processes.js";
import { messageRequests, waitFor } from "./sim-requests.js";

function memAvailableKb(): number {
  const match = /MemAvailable:\s+(\d+) kB/.exec(readFileSync("/proc/meminfo", "utf8"));
  return Number(match?.[1] ?? Number.NaN);
}

/** Proportional set size of a process (shared pages split between their users): kB. */
function pssKb(pid: number | "self"): number {
  const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
  return Number(match?.[1] ?? Number.NaN);
}

/** Memory per concurrent sub-agent with 32 in flight: worker pool vs process per agent (PSS and MemAvailable). */
export async function memoryPerAgent(dir: string): Promise<BenchResult[]> {
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
