import { describe, expect, it } from "vitest";
import { createBatchPool } from "./batch-executor.js";

interface WorkerReport {
  readonly header: { readonly threadId: number };
  readonly javascriptHeap: { readonly memoryLimit: number };
}

/** The worker threads of this process, as its diagnostic report lists them. */
function reportedWorkers(): readonly WorkerReport[] {
  return (process.report.getReport() as unknown as { workers: readonly WorkerReport[] }).workers;
}

describe("batch worker pool", () => {
  it("R-V3: a batch thread's heap limit sits below 2 GiB, where V8 grows a heap by at most 2× its live objects, not 4×", async () => {
    // Threads another test left in this process (they may not be batch threads) are not judged.
    const earlier = new Set(reportedWorkers().map((worker) => worker.header.threadId));
    const pool = createBatchPool(
      { endpoint: { apiKey: "unused" }, simulated: true, modelOverrides: [], close: async () => {} },
      8,
      undefined,
    );
    try {
      await pool.prewarm();
      // A thread shows in the process report once it answers the report's interrupt.
      let workers: readonly WorkerReport[] = [];
      for (let tries = 0; workers.length === 0 && tries < 300; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        workers = reportedWorkers().filter((worker) => !earlier.has(worker.header.threadId));
      }
      expect(workers.length).toBeGreaterThan(0);
      // Node's default for a thread is the process's own limit: 4 GiB on a machine with 16 GiB.
      for (const worker of workers) expect(worker.javascriptHeap.memoryLimit).toBeLessThan(2048 * 2 ** 20);
    } finally {
      await pool.close();
    }
  });
});
