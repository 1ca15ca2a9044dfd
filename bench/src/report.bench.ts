/**
 * `forkloop report` (R-V1): generation time and file size of a batch report for 100 and
 * 10,000 items, and the time the page takes to open (navigation → drawn) in headless Chromium
 * for 100, 1,000 and 10,000 items. The 100 items are a real batch run by the built CLI on the
 * embedded simulator (a third read a file first, a tenth fail); the larger batches repeat those
 * items' journal outcomes and transcripts under new ids (a real journal, written through the
 * local journal backend), so every figure comes from the same kind of data. Replies come from
 * the simulator, not a real model.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { openLocalJournalBackend, readJournal, replayJournal } from "@forkloop/batch";
import { chromium } from "playwright-core";
import { type BenchResult, compare } from "./harness.js";

const CLI = fileURLToPath(new URL("../../apps/cli/dist/main.js", import.meta.url));
const CHROMIUM = process.env.FORKLOOP_CHROMIUM ?? "/usr/bin/chromium";
const BASE_ITEMS = 100;

function runCli(
  args: readonly string[],
  cwd: string,
): Promise<{ code: number | null; stdout: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, FORKLOOP_SIM_LATENCY: "none" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, ms: performance.now() - started }));
  });
}

/** The 100-item batch, run for real. */
async function baseBatch(dir: string): Promise<string> {
  await mkdir(join(dir, "docs"), { recursive: true });
  await writeFile(join(dir, "docs", "notes.md"), "# Notes\nalpha beta gamma delta\n");
  const tasks = Array.from({ length: BASE_ITEMS }, (_, index) =>
    index % 10 === 7
      ? `explain item ${index}`
      : index % 3 === 0
        ? `Summarize docs/notes.md (${index})`
        : `count to ${index}`,
  );
  await writeFile(join(dir, "tasks.jsonl"), tasks.map((task) => `${JSON.stringify({ task })}\n`).join(""));
  const run = await runCli(
    [
      "batch",
      "--items",
      "tasks.jsonl",
      "--prompt",
      "{{item.task}}",
      "--id",
      "base",
      "--concurrency",
      "16",
      "--state-dir",
      ".forkloop",
    ],
    dir,
  );
  if (run.code !== 0 && run.code !== 6) throw new Error(`the base batch failed (exit ${run.code})`);
  return join(dir, ".forkloop", "batches", "base");
}

/** A batch of `count` items made of the base batch's outcomes and transcripts, under new ids. */
async function cloneBatch(dir: string, baseDir: string, count: number): Promise<string> {
  const id = `x${count}`;
  const target = join(dir, ".forkloop", "batches", id);
  await mkdir(join(target, "transcripts"), { recursive: true });
  const spec = JSON.parse(await readFile(join(baseDir, "batch.json"), "utf8"));
  await writeFile(join(target, "batch.json"), JSON.stringify({ ...spec, id, outputDir: target }));
  const { items } = replayJournal((await readJournal(baseDir)).records);
  const backend = await openLocalJournalBackend({ dir: target });
  try {
    const copies = Array.from({ length: count }, (_, index) => {
      const source = items[index % items.length]!;
      return {
        source,
        item: { ...source.item, id: `${source.item.id}-${index}`, label: `${source.item.label}#${index}` },
      };
    });
    await backend.enqueue(copies.map((copy) => copy.item));
    for (const copy of copies) {
      const claim = await backend.claim("bench");
      if (!claim) throw new Error("the clone ran out of items");
      const result = copy.source.result ?? {
        turns: 0,
        usage: {
          inputTokens: 0,
          outputTokens: 0,
          cacheCreationInputTokens: 0,
          cacheReadInputTokens: 0,
          apiCalls: 0,
        },
        costUsd: 0,
        durationMs: 0,
        text: "",
      };
      if (copy.source.status === "succeeded") await backend.complete(claim, result);
      else await backend.fail(claim, copy.source.error ?? { code: "unknown", message: "unknown" }, result);
      const transcript = join(baseDir, "transcripts", `${copy.source.item.id}-${copy.source.attempts}.fltr`);
      if (existsSync(transcript))
        await copyFile(transcript, join(target, "transcripts", `${claim.item.id}-1.fltr`));
    }
  } finally {
    await backend.close();
  }
  return id;
}

/** Best-of-`runs` wall time of `forkloop report <id>` (a whole process) and the file's size. */
async function generate(dir: string, id: string, runs: number) {
  let best = Number.POSITIVE_INFINITY;
  let path = "";
  for (let run = 0; run < runs; run++) {
    const result = await runCli(["report", id], dir);
    if (result.code !== 0) throw new Error(`forkloop report ${id} exited ${result.code}`);
    best = Math.min(best, result.ms);
    path = result.stdout.trim();
  }
  return { ms: best, bytes: (await stat(path)).size, path };
}

/** Best-of-3 time from navigation to `body[data-ready]` in headless Chromium. */
async function openTime(path: string): Promise<number> {
  const profile = await mkdtemp(join(tmpdir(), "forkloop-bench-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1280, height: 900 },
  });
  try {
    let best = Number.POSITIVE_INFINITY;
    for (let run = 0; run < 3; run++) {
      const page = await context.newPage();
      const started = performance.now();
      await page.goto(pathToFileURL(path).href);
      await page.waitForSelector("body[data-ready=true]", { timeout: 60_000 });
      best = Math.min(best, performance.now() - started);
      await page.close();
    }
    return best;
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), "forkloop-bench-report-"));
  try {
    const baseDir = await baseBatch(dir);
    const small = await generate(dir, "base", 3);
    const thousand = await generate(dir, await cloneBatch(dir, baseDir, 1_000), 2);
    const large = await generate(dir, await cloneBatch(dir, baseDir, 10_000), 2);
    const notes = "whole `forkloop report` process, best of 3 (100) / 2 (1,000 and 10,000)";
    const results: BenchResult[] = [
      compare(
        "report: batch generation time, 10,000 vs 100 items",
        "wall time",
        "ms",
        { label: "100 items", value: small.ms },
        { label: "10,000 items", value: large.ms },
        notes,
      ),
      compare(
        "report: batch file size, 10,000 vs 100 items",
        "size",
        "MB",
        { label: "100 items", value: small.bytes / 1e6 },
        { label: "10,000 items", value: large.bytes / 1e6 },
      ),
      {
        name: "report: batch generation time, 1,000 items",
        metric: "wall time",
        value: thousand.ms,
        unit: "ms",
        notes,
      },
      {
        name: "report: batch file size, 1,000 items",
        metric: "size",
        value: thousand.bytes / 1e6,
        unit: "MB",
      },
    ];
    if (existsSync(CHROMIUM)) {
      const [open100, open1k, open10k] = [
        await openTime(small.path),
        await openTime(thousand.path),
        await openTime(large.path),
      ];
      results.push(
        compare(
          "report: page open (navigation → drawn) in headless Chromium, 1,000 vs 100 items",
          "time",
          "ms",
          { label: "100 items", value: open100 },
          { label: "1,000 items", value: open1k },
          "best of 3; the issue's bar: under 2 s for 1,000 items",
        ),
        {
          name: "report: page open in headless Chromium, 10,000 items",
          metric: "time",
          value: open10k,
          unit: "ms",
          notes: "best of 3",
        },
      );
    }
    return results;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
