/**
 * R-R4: the batch journal's cost of durability, and how long a resume takes.
 *   1. Append throughput before and after the durability changes, side by side on the same disk:
 *      "before" is the journal's former append loop (one write of the group's text, one fsync,
 *      no check of the bytes written, no cut-back on failure); "after" is today's `openLog`
 *      (every byte checked and a short write continued, the group fsync'd, a failed group cut
 *      back and the log fail-stopped). Both group-commit; 32 appenders write 4,000 records like
 *      a batch's claim/settle records.
 *   2. Resume of a finished 10,000-item journal (30,000 records: enqueued, claimed, completed):
 *      open + checksum + schema-check + replay in-process, and `forkloop batch --resume` end to
 *      end (spawned, report written; nothing left to run).
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { type FileHandle, mkdir, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { encodeRecord, openLocalJournalBackend, openLog, readLog } from "@forkloop/batch";
import { type BenchResult, compare, percentile, timeRuns } from "./harness.js";

const CLI = fileURLToPath(new URL("../../apps/cli/dist/main.js", import.meta.url));
const APPENDERS = 32;
const RECORDS = 4_000;
const RESUME_ITEMS = 10_000;

/** The journal's append loop as it was before the durability changes (kept here only as the baseline). */
class FormerGroupCommitLog {
  #pending: { text: string; resolve: () => void }[] = [];
  #flushing: Promise<void> | undefined;
  constructor(private readonly handle: FileHandle) {}
  append(record: object): Promise<void> {
    return new Promise((resolve) => {
      this.#pending.push({ text: encodeRecord(record), resolve });
      this.#flushing ??= this.#flush();
    });
  }
  async #flush(): Promise<void> {
    while (this.#pending.length > 0) {
      const group = this.#pending;
      this.#pending = [];
      await this.handle.write(group.map((entry) => entry.text).join(""));
      await this.handle.sync();
      for (const entry of group) entry.resolve();
    }
    this.#flushing = undefined;
  }
  async close(): Promise<void> {
    await this.#flushing;
    await this.handle.close();
  }
}

const record = (index: number) => ({
  type: "claimed",
  at: new Date(0).toISOString(),
  id: `item-${index}`,
  attempt: 1,
  worker: "pid-1",
  pid: 1,
});

/** Records per second with APPENDERS concurrent appenders, each awaiting its own appends. */
async function throughput(log: {
  append(record: object): Promise<void>;
  close(): Promise<void>;
}): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: APPENDERS }, async () => {
      while (next < RECORDS) await log.append(record(next++));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await log.close();
  return RECORDS / seconds;
}

async function appendThroughput(dir: string): Promise<BenchResult> {
  const before: number[] = [];
  const after: number[] = [];
  // Interleaved rounds, so both sides see the same disk and the same neighbours.
  for (let round = 0; round < 3; round++) {
    const formerPath = join(dir, `former-${round}.log`);
    before.push(await throughput(new FormerGroupCommitLog(await open(formerPath, "a"))));
    const path = join(dir, `journal-${round}.log`);
    after.push(await throughput(await openLog(path, await readLog(path))));
  }
  return compare(
    "journal append throughput (durability checks / before)",
    `records/s, ${APPENDERS} concurrent appenders, group commit + fsync, median of 3`,
    "records/s",
    { label: "before issue 11", value: percentile(before, 50) },
    { label: "checked + fail-stop", value: percentile(after, 50) },
    "A ratio near 1 means the byte checks and the failure handling cost nothing next to the fsync.",
  );
}

/** A finished journal of `items` items, written at once (as a batch would leave it). */
async function finishedBatch(cwd: string, id: string, items: number): Promise<string> {
  const dir = join(cwd, ".forkloop", "batches", id);
  await mkdir(dir, { recursive: true });
  const at = new Date(0).toISOString();
  const result = {
    turns: 2,
    usage: {
      inputTokens: 100,
      outputTokens: 50,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 5000,
      apiCalls: 3,
    },
    costUsd: 0.001,
    durationMs: 900,
    terminal: "completed",
    text: "A summary of the file in a sentence or two, as an item's answer would be.",
  };
  const lines: string[] = [];
  for (let index = 0; index < items; index++) {
    const item = { id: `i${index}`, label: `src/file-${index}.ts`, prompt: `Summarize src/file-${index}.ts` };
    lines.push(encodeRecord({ type: "enqueued", at, item }));
  }
  for (let index = 0; index < items; index++) {
    lines.push(encodeRecord({ type: "claimed", at, id: `i${index}`, attempt: 1, worker: "pid-1", pid: 1 }));
    lines.push(encodeRecord({ type: "completed", at, id: `i${index}`, attempt: 1, result }));
  }
  await writeFile(join(dir, "journal.log"), lines.join(""));
  const spec = {
    id,
    createdAt: at,
    cwd,
    source: { kind: "items", path: join(cwd, "items.jsonl") },
    prompt: "{{item}}",
    model: "claude-sonnet-4-6",
    maxTurns: 8,
    allowedTools: [],
    disallowedTools: [],
    permissionMode: "dontAsk",
    fallbackModels: [],
    outputDir: dir,
  };
  await writeFile(join(dir, "batch.json"), JSON.stringify(spec));
  // The marker a finished enqueue leaves (its count and id digest match the journal).
  const ids = Array.from({ length: items }, (_, index) => `i${index}`).sort();
  const digest = createHash("sha256").update(ids.join("\n")).digest("hex");
  await writeFile(join(dir, "enqueued.ok"), `${JSON.stringify({ items, digest })}\n`);
  return dir;
}

function resumeCli(cwd: string, id: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, "batch", "--resume", id], {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, FORKLOOP_SIM_LATENCY: "none" },
      stdio: ["ignore", "ignore", "ignore"],
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`exit ${code}`)),
    );
  });
}

async function resumeTime(cwd: string): Promise<BenchResult[]> {
  const dir = await finishedBatch(cwd, "resume10k", RESUME_ITEMS);
  const inProcess = await timeRuns(async () => {
    const backend = await openLocalJournalBackend({ dir });
    await backend.list();
    await backend.close();
  }, 5);
  const cli: number[] = [];
  for (let run = 0; run < 3; run++) cli.push(await resumeCli(cwd, "resume10k"));
  return [
    {
      name: "journal resume, 10,000 items (open + verify + replay)",
      metric: "median of 5, in-process",
      value: percentile(inProcess, 50),
      unit: "ms",
      notes: `${RESUME_ITEMS * 3} records; p95 ${percentile(inProcess, 95).toFixed(0)} ms`,
    },
    {
      name: "forkloop batch --resume of a finished 10,000-item batch",
      metric: "median of 3, wall time of the process (start, replay, report, exit)",
      value: percentile(cli, 50),
      unit: "ms",
    },
  ];
}

export async function run(): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), "forkloop-journal-bench-"));
  try {
    return [await appendThroughput(dir), ...(await resumeTime(dir))];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
