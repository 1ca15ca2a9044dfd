import { createAgentPool } from "@forkloop/orchestrator";
import { testTask } from "@forkloop/orchestrator/testing";
import { startSimulator } from "@forkloop/sim";
import { type BenchResult, compare, percentile } from "../harness.js";
import { exited, spawnAgentProcess } from "./agent-processes.js";
import { messageRequests, waitFor } from "./sim-requests.js";

/** Wall-clock ms on the simulator's clock, so its `startedAt` compares with ours. */
const now = () => performance.timeOrigin + performance.now();

/**
 * Fork start latency (`pool.run()` → the worker's first HTTP request), p50/p95, warm and cold
 * pool, vs a fresh `node` process per sub-agent running the same sub-agent code.
 */
export async function forkLatency(dir: string): Promise<BenchResult[]> {
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
