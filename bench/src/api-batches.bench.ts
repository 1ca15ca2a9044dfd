/**
 * `npm run bench -- api-batches` (R-B8, R-B9): the same 200-item, 3-turn batch (Read a file,
 * Edit it, report — the built-in policy's rename) run online and with `--api batches`, on one
 * simulator: 400 ms to first token and 60 output tokens/s online; each Message Batch processes in
 * 2 s (the API takes up to 24 hours, most batches under one: the batch latency is scaled down).
 * Compared: the cost (the simulator's records: batch entries at half price), the cost-weighted
 * tokens (input ×1, cache writes ×1.25 / ×2 by TTL, reads ×0.1, output at the output/input price
 * ratio; a batch entry's ×0.5), the wall time, and the batch creations against the rounds (one
 * creation per round, no entry for any item twice). Every reply comes from the simulator.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type LatencyModel, type RequestRecord, resolveModel, startSimulator } from "@forkloop/sim";
import { costWeightedInputTokens } from "./cost-weighted-tokens.js";
import { type BenchResult, compare } from "./harness.js";

const CLI = fileURLToPath(new URL("../../apps/cli/dist/main.js", import.meta.url));
const ITEMS = 200;
const ONLINE_CONCURRENCY = 32;
const BATCH_PROCESSING_MS = 2_000;
const MODEL = "claude-haiku-4-5";
const LATENCY: LatencyModel = {
  default: { ttftMs: 400, prefillTokensPerSecond: 1e12, outputTokensPerSecond: 60 },
};

async function corpus(root: string): Promise<void> {
  await mkdir(join(root, "src"), { recursive: true });
  for (let index = 0; index < ITEMS; index++) {
    const name = `module${String(index).padStart(3, "0")}`;
    await writeFile(
      join(root, "src", `${name}.ts`),
      `// ${name}: part of the benchmark corpus\nexport function ${name}(value: number): number {\n  return value * ${index};\n}\n`,
    );
  }
}

function runCli(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; wallMs: number; stderr: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, wallMs: performance.now() - started, stderr }));
  });
}

/** Cost-weighted tokens of the records: input weighting, output at its price ratio, batch ×0.5. */
function weighted(records: readonly RequestRecord[]): { tokens: number; costUsd: number } {
  const model = resolveModel(MODEL)!;
  const outputWeight = model.outputPricePerMTok / model.inputPricePerMTok;
  let tokens = 0;
  let costUsd = 0;
  for (const record of records) {
    if (!record.usage) continue;
    const batch = record.path.includes("#") ? 0.5 : 1;
    tokens += batch * (costWeightedInputTokens(record.usage) + record.usage.output_tokens * outputWeight);
    costUsd += record.costUsd;
  }
  return { tokens, costUsd };
}

export async function run(): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), "forkloop-api-batches-bench-"));
  const sim = await startSimulator({ latency: LATENCY, batches: { processingMs: BATCH_PROCESSING_MS } });
  try {
    const args = (id: string) => [
      "batch",
      "--files",
      "src/*.ts",
      "--prompt",
      "rename value to amount in {{file}}",
      "--permission-mode",
      "acceptEdits",
      "--model",
      MODEL,
      "--max-turns",
      "5",
      "--id",
      id,
      // Outside the project: an edit batch copies the project for each item.
      "--state-dir",
      join(dir, `state-${id}`),
    ];
    const env = (home: string): NodeJS.ProcessEnv => ({
      PATH: process.env.PATH ?? "",
      HOME: home,
      ANTHROPIC_API_KEY: "bench-key",
      ANTHROPIC_BASE_URL: sim.url,
      FORKLOOP_BATCH_POLL_MS: "250",
      FORKLOOP_BATCH_ROUND_WAIT_MS: "5000",
    });

    const onlineDir = join(dir, "online");
    await corpus(onlineDir);
    const online = await runCli(
      [...args("online"), "--concurrency", String(ONLINE_CONCURRENCY)],
      onlineDir,
      env(onlineDir),
    );
    if (online.code !== 0)
      throw new Error(`the online batch failed (${online.code}):\n${online.stderr.slice(-2000)}`);
    const onlineRecords = sim.requests().filter((r) => r.path === "/v1/messages" && r.status === 200);
    sim.clearRequests();

    const batchDir = join(dir, "batches");
    await corpus(batchDir);
    const batched = await runCli([...args("batches"), "--api", "batches"], batchDir, env(batchDir));
    if (batched.code !== 0)
      throw new Error(`the --api batches run failed (${batched.code}):\n${batched.stderr.slice(-2000)}`);
    const records = sim.requests();
    const entries = records.filter((r) => r.path.includes("#") && r.status === 200);
    const online2 = records.filter((r) => r.path === "/v1/messages");
    if (online2.length > 0) throw new Error(`${online2.length} requests went online during --api batches`);
    const rounds = (batched.stderr.match(/^round \d+: message batch \S+ sent/gm) ?? []).length;
    const batchIds = new Set(entries.map((r) => r.path.split("#")[0]));
    const perItem = new Map<string, number>();
    for (const entry of entries) {
      const key = JSON.stringify(JSON.parse(entry.rawBody).messages);
      perItem.set(key, (perItem.get(key) ?? 0) + 1);
    }
    const duplicates = [...perItem.values()].filter((n) => n > 1).length;

    const a = weighted(onlineRecords);
    const b = weighted(entries);
    const notes = `${ITEMS} items × 3 turns (Read, Edit, report), ${MODEL}; online: ${onlineRecords.length} requests at concurrency ${ONLINE_CONCURRENCY}, 400 ms TTFT + 60 tok/s; --api batches: ${entries.length} entries in ${batchIds.size} batches over ${rounds} rounds (${duplicates} entries sent twice), each batch processed in ${BATCH_PROCESSING_MS} ms of simulated time (scaled down from the API's up to 24 h), polled every 250 ms`;
    return [
      compare(
        "api-batches: cost-weighted tokens, --api batches vs online (lower is better; goal ≤ 0.55)",
        "cost-weighted tokens",
        "tokens",
        { label: "online", value: Math.round(a.tokens) },
        { label: "--api batches", value: Math.round(b.tokens) },
        notes,
      ),
      compare(
        "api-batches: cost in USD (simulated), --api batches vs online",
        "cost",
        "USD",
        { label: "online", value: a.costUsd },
        { label: "--api batches", value: b.costUsd },
      ),
      compare(
        "api-batches: wall time, --api batches vs online (the price of half price)",
        "wall time",
        "ms",
        { label: "online", value: Math.round(online.wallMs) },
        { label: "--api batches", value: Math.round(batched.wallMs) },
      ),
      compare(
        "api-batches: batch creations per round (1 = one batch a round)",
        "batches",
        "count",
        { label: "rounds", value: rounds },
        { label: "batch creations", value: batchIds.size },
      ),
    ];
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}
