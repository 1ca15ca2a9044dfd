import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readJournal } from "@forkloop/batch";
import { batchStateDir, runCliInProcess, startSimInProcess } from "@forkloop/cli/testing";
import { loadTranscript } from "@forkloop/orchestrator";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-batch-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeFiles(count: number): Promise<void> {
  await mkdir(join(dir, "src"), { recursive: true });
  for (let index = 0; index < count; index++) {
    await writeFile(
      join(dir, "src", `m${index}.ts`),
      `// module ${index}\nexport const m${index} = ${index};\n`,
    );
  }
}

async function results(batchDir: string) {
  const text = await readFile(join(batchDir, "results.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map(
      (line) =>
        JSON.parse(line) as {
          label: string;
          status: string;
          turns: number;
          error: { code: string } | null;
          usage: { cacheReadInputTokens: number };
        },
    );
}

describe("forkloop batch", () => {
  it("--files: every item succeeds through the worker pool; results.jsonl + report; later items read the shared prefix from the cache (R-F3, R-F4)", async () => {
    await writeFiles(6);
    const result = await runCliInProcess(
      ["batch", "--files", "src/*.ts", "--prompt", "Summarize {{file}}", "--concurrency", "3", "--id", "ok"],
      { cwd: dir },
    );
    expect(result.code, result.stderr).toBe(0);
    const batchDir = batchStateDir(dir, "ok");
    const lines = await results(batchDir);
    expect(lines.map((line) => [line.label, line.status, line.turns])).toEqual(
      Array.from({ length: 6 }, (_, index) => [`src/m${index}.ts`, "succeeded", 2]),
    );
    // Warming: the first item writes the prefix, every other item's first request reads it.
    expect(lines.filter((line) => line.usage.cacheReadInputTokens > 0)).toHaveLength(6);
    const report = JSON.parse(await readFile(join(batchDir, "report.json"), "utf8"));
    expect(report.totals).toMatchObject({ items: 6, succeeded: 6, failed: 0, pending: 0, turns: 12 });
    expect(report.totals.cacheReadShare).toBeGreaterThan(0.5);
    expect(await readFile(join(batchDir, "report.md"), "utf8")).toContain("| src/m0.ts | succeeded | 2 |");
    expect(result.stdout).toMatch(/6 items: 6 succeeded, 0 failed/);
    // Not a TTY: plain progress lines, no escape codes.
    expect(result.stderr).toMatch(/^ok {5}src\/m0\.ts \(2 turns/m);
    expect(result.stderr).not.toContain("\x1b[");
    const { records } = await readJournal(batchDir);
    expect(records.filter((record) => record.type === "completed")).toHaveLength(6);
    // Each item's sub-agent transcript can be replayed turn by turn.
    const first = records.find((record) => record.type === "completed");
    const replay = await runCliInProcess(["replay", join(batchDir, "transcripts", `${first?.id}-1.fltr`)], {
      cwd: dir,
    });
    expect(replay.stdout).toMatch(
      /turn 1 ← start[\s\S]*turn 2 ← next_turn[\s\S]*terminal: completed after 2 turns/,
    );
  });

  it("--items with a scripted simulator: a failing item is data; partial failure exits 6, all failed exits 7", async () => {
    const scenario = join(dir, "scenario.json");
    await writeFile(
      scenario,
      JSON.stringify({
        rules: [{ match: { lastUserText: "poison" }, fault: "400" }],
        fallback: { content: [{ type: "text", text: "done (scripted by the simulator)" }] },
      }),
    );
    const sim = await startSimInProcess(dir, ["--scenario", scenario]);
    try {
      await writeFile(
        join(dir, "tasks.jsonl"),
        '{"task":"alpha"}\n{"task":"poison pill"}\n{"task":"gamma"}\n',
      );
      const partial = await runCliInProcess(
        [
          "batch",
          "--items",
          "tasks.jsonl",
          "--prompt",
          "Do {{item.task}}",
          "--id",
          "partial",
          "--output",
          "out",
        ],
        { cwd: dir, env: sim.env },
      );
      expect(partial.code, partial.stderr).toBe(6);
      const lines = await results(join(dir, "out"));
      expect(lines.map((line) => line.status)).toEqual(["succeeded", "failed", "succeeded"]);
      expect(lines[1]?.error?.code).toMatch(/error/);
      expect(partial.stdout).toMatch(/3 items: 2 succeeded, 1 failed/);
      expect(partial.stderr).not.toContain("simulator, not a real model"); // an explicit endpoint is not announced

      // --retry-failed reruns only the failed item (here on the embedded simulator, which answers it).
      const retried = await runCliInProcess(["batch", "--resume", "partial", "--retry-failed"], { cwd: dir });
      expect(retried.code, retried.stderr).toBe(0);
      expect((await results(join(dir, "out"))).map((line) => line.status)).toEqual([
        "succeeded",
        "succeeded",
        "succeeded",
      ]);
      expect(retried.stderr.match(/^ok /gm)).toHaveLength(1);

      // --output on a resume writes the report there and batch.json remembers it.
      const moved = await runCliInProcess(["batch", "--resume", "partial", "--output", "out2"], { cwd: dir });
      expect(moved.code, moved.stderr).toBe(0);
      expect((await results(join(dir, "out2"))).map((line) => line.status)).toEqual([
        "succeeded",
        "succeeded",
        "succeeded",
      ]);
      const spec = JSON.parse(await readFile(join(batchStateDir(dir, "partial"), "batch.json"), "utf8"));
      expect(spec.outputDir).toBe(join(dir, "out2"));

      await writeFile(join(dir, "bad.jsonl"), '"poison one"\n"poison two"\n');
      const failed = await runCliInProcess(["batch", "--items", "bad.jsonl", "--prompt", "Do {{item}}"], {
        cwd: dir,
        env: sim.env,
      });
      expect(failed.code).toBe(7);
    } finally {
      await sim.stop();
    }
  });

  it("a 429 with retry-after pauses the whole pool: no worker sends before the pause ends, and every item still succeeds", async () => {
    await writeFiles(4);
    // Requests 2-4 stream slowly, so they are still in flight when request 1 comes back 429.
    const sim = await startSimInProcess(dir, ["--faults", "429@1:retry_after=1,slow@2-4:slow_ms=80"]);
    try {
      const result = await runCliInProcess(
        [
          "batch",
          "--files",
          "src/*.ts",
          "--prompt",
          "Summarize {{file}}",
          "--concurrency",
          "4",
          "--no-warm",
          "--id",
          "rl",
        ],
        { cwd: dir, env: sim.env },
      );
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/rate limited \(429 on src\/m\d\.ts\): pausing all workers for 1s/);
      const requests = (await sim.requests()).filter((record) => record.path === "/v1/messages");
      const limited = requests.find((record) => record.fault === "429");
      expect(limited?.endedAt).toBeTypeOf("number");
      const resumeAt = (limited?.endedAt ?? 0) + 1_000;
      // The 4 first-wave requests were already on the wire; every later one waited for the pause.
      const later = requests.slice(4);
      expect(later.length).toBeGreaterThanOrEqual(5);
      for (const record of later) expect(record.startedAt).toBeGreaterThanOrEqual(resumeAt - 50);
      expect((await results(batchStateDir(dir, "rl"))).every((line) => line.status === "succeeded")).toBe(
        true,
      );
      // R-V1: the item that met the 429 records the pause in its transcript (the report draws it).
      const transcripts = join(batchStateDir(dir, "rl"), "transcripts");
      const pauses = (
        await Promise.all((await readdir(transcripts)).map((name) => loadTranscript(join(transcripts, name))))
      ).flatMap((loaded) => loaded.records.filter((record) => record.type === "rate_limited"));
      expect(pauses).toHaveLength(1);
      expect(Date.parse(pauses[0]?.until ?? "") - Date.parse(pauses[0]?.at ?? "")).toBe(1_000);
    } finally {
      await sim.stop();
    }
  });
});
