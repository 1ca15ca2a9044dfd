/**
 * `forkloop batch` throughput: a 500-item batch on the simulator (400 ms to
 * first token, 60 output tokens/s, two turns per item: Read the file, then summarize it) at
 * concurrency 32, compared with
 *   1. the ideal latency-bound throughput: 32 items in flight, each taking exactly the model time
 *      the simulator charged for its requests (TTFT + output tokens / 60 per request), no overhead;
 *   2. one `forkloop run` process per item at the same concurrency (the `claude -p` + `xargs -P`
 *      pattern). That baseline is SAMPLED on fewer items and its wall time extrapolated linearly
 *      to 500 (stated in the notes); peak memory is the peak of the summed RSS of the live
 *      processes, sampled from /proc.
 * Every reply comes from the simulator, not a real model.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type LatencyModel, startSimulator } from "@forkloop/sim";
import { type BenchResult, compare } from "./harness.js";

const CLI = fileURLToPath(new URL("../../apps/cli/dist/main.js", import.meta.url));
const ITEMS = 500;
const CONCURRENCY = 32;
const PROCESS_SAMPLE = 64;
const TTFT_MS = 400;
const OUTPUT_TOKENS_PER_SECOND = 60;
// Prefill made effectively instant so every request's first token comes at exactly 400 ms.
const LATENCY: LatencyModel = {
  default: { ttftMs: TTFT_MS, prefillTokensPerSecond: 1e12, outputTokensPerSecond: OUTPUT_TOKENS_PER_SECOND },
};

function rssKiB(pid: number): Promise<number> {
  return readFile(`/proc/${pid}/status`, "utf8").then(
    (text) => Number(/VmRSS:\s+(\d+)/.exec(text)?.[1] ?? 0),
    () => 0,
  );
}

/** Runs `node <CLI> …args` processes with at most `concurrency` alive; tracks the peak summed RSS. */
async function runProcesses(
  argsList: readonly string[][],
  concurrency: number,
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ wallMs: number; peakRssMiB: number; failures: number }> {
  const live = new Set<number>();
  let peakKiB = 0;
  let failures = 0;
  const sampler = setInterval(async () => {
    const sizes = await Promise.all([...live].map(rssKiB));
    peakKiB = Math.max(
      peakKiB,
      sizes.reduce((sum, size) => sum + size, 0),
    );
  }, 50);
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < argsList.length) {
      const args = argsList[next++]!;
      await new Promise<void>((resolve) => {
        const child = spawn(process.execPath, [CLI, ...args], {
          cwd: options.cwd,
          env: options.env,
          stdio: "ignore",
        });
        if (child.pid !== undefined) live.add(child.pid);
        child.on("close", (code) => {
          if (child.pid !== undefined) live.delete(child.pid);
          if (code !== 0) failures++;
          resolve();
        });
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - started;
  clearInterval(sampler);
  return { wallMs, peakRssMiB: peakKiB / 1024, failures };
}

export async function run(): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), "forkloop-batch-bench-"));
  const sim = await startSimulator({ latency: LATENCY });
  try {
    await mkdir(join(dir, "src"));
    for (let index = 0; index < ITEMS; index++) {
      const name = `module${String(index).padStart(3, "0")}`;
      await writeFile(
        join(dir, "src", `${name}.ts`),
        `// ${name}: part of the benchmark corpus\nexport function ${name}(value: number): number {\n  return value * ${index};\n}\n`,
      );
    }
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      ANTHROPIC_API_KEY: "bench-key",
      ANTHROPIC_BASE_URL: sim.url,
    };

    // forkloop batch: one process, sub-agents in worker threads.
    const batch = await runProcesses(
      [
        [
          "batch",
          "--files",
          "src/*.ts",
          "--prompt",
          "Summarize {{file}}",
          "--concurrency",
          String(CONCURRENCY),
          "--id",
          "bench",
          "--state-dir",
          ".forkloop",
        ],
      ],
      1,
      { cwd: dir, env },
    );
    if (batch.failures > 0)
      throw new Error("the forkloop batch run failed; see .forkloop/batches/bench/report.md");
    const report = JSON.parse(
      await readFile(join(dir, ".forkloop", "batches", "bench", "report.json"), "utf8"),
    ) as {
      totals: { succeeded: number; turns: number; cacheReadShare: number };
    };
    const batchRequests = sim
      .requests()
      .filter((record) => record.path === "/v1/messages" && record.status === 200);
    // Model time the simulator charged: TTFT + streamed output at 60 tokens/s, per request.
    const modelMs = batchRequests.reduce(
      (sum, record) => sum + TTFT_MS + ((record.usage?.output_tokens ?? 0) / OUTPUT_TOKENS_PER_SECOND) * 1000,
      0,
    );
    // 32 items always in flight, each taking exactly its model time: items per second.
    const idealItemsPerSecond = (CONCURRENCY * ITEMS) / (modelMs / 1000);
    const achievedItemsPerSecond = report.totals.succeeded / (batch.wallMs / 1000);
    sim.clearRequests();

    // Baseline: one `forkloop run` process per item, sampled on PROCESS_SAMPLE items.
    const processes = await runProcesses(
      Array.from({ length: PROCESS_SAMPLE }, (_, index) => [
        "run",
        `Summarize src/module${String(index).padStart(3, "0")}.ts`,
        "--output-format",
        "json",
      ]),
      CONCURRENCY,
      { cwd: dir, env },
    );
    const extrapolatedWallMs = (processes.wallMs * ITEMS) / PROCESS_SAMPLE;
    const sampleNote = `process-per-item measured on ${PROCESS_SAMPLE} items (${processes.failures} failed) and its wall time extrapolated linearly to ${ITEMS}`;
    return [
      compare(
        "batch: achieved vs ideal latency-bound throughput (higher is better, 1 = no overhead)",
        "items/s",
        "items/s",
        { label: "ideal", value: idealItemsPerSecond },
        { label: "forkloop batch", value: achievedItemsPerSecond },
        `${ITEMS} items, concurrency ${CONCURRENCY}, ${report.totals.turns} turns, simulator TTFT ${TTFT_MS} ms + ${OUTPUT_TOKENS_PER_SECOND} tok/s; cache reads ${(report.totals.cacheReadShare * 100).toFixed(1)}% of input`,
      ),
      compare(
        "batch vs process-per-item: wall time for 500 items (lower is better)",
        "wall time",
        "s",
        { label: "forkloop run per item", value: extrapolatedWallMs / 1000 },
        { label: "forkloop batch", value: batch.wallMs / 1000 },
        sampleNote,
      ),
      compare(
        "batch vs process-per-item: peak memory at concurrency 32 (lower is better)",
        "peak RSS",
        "MiB",
        { label: "forkloop run per item (sum of live processes)", value: processes.peakRssMiB },
        { label: "forkloop batch (one process)", value: batch.peakRssMiB },
        "RSS sampled every 50 ms from /proc; the batch process includes its worker threads",
      ),
    ];
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}
