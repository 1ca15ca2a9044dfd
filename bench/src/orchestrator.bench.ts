/**
 * Orchestrator headline figures (R-F2–R-F4), each side by side in one run:
 * 1. fork start latency (`pool.run()` → the worker's first HTTP request), p50/p95, warm and cold
 *    pool, vs a fresh `node` process per sub-agent running the same sub-agent code;
 * 2. machine memory per concurrent sub-agent at 32 in flight (drop in MemAvailable), pool vs
 *    process-per-agent;
 * 3. cost-weighted input tokens (uncached ×1, write ×1.25, read ×0.1) of a compact fork, a
 *    session-memory fork and a 16-way fan-out: CacheSafeParams (+ warming) vs naive forks with
 *    their own system prompt and no warming;
 * 4. transcript append throughput and resume load time, msgpackr records vs JSON lines;
 * 5. R-R12: a 300-turn transcript's size against its conversation, and resume's peak memory
 *    against the run's (`growth`).
 * All model traffic goes to the simulator (packages/sim), never a real model.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchResult } from "./harness.js";
import { cacheCost } from "./orchestrator/fork-cache-cost.js";
import { forkLatency } from "./orchestrator/fork-start-latency.js";
import { memoryPerAgent } from "./orchestrator/memory-per-agent.js";
import { transcriptGrowth } from "./orchestrator/transcript-growth.js";
import { transcripts } from "./orchestrator/transcript-throughput.js";

/** `FORKLOOP_BENCH_ORCHESTRATOR=latency,cost` runs only those parts (default: all). */
const SECTIONS = {
  latency: forkLatency,
  memory: memoryPerAgent,
  cost: cacheCost,
  transcripts,
  growth: transcriptGrowth,
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
