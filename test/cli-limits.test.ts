import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, streamJsonLines, withSim, writeScenario } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The models file and the windows below are sized for Sonnet 4.6 (its tokenizer), not for run's
// default model (Claude Code's newest Opus, R-X2), so every run names it.
const SONNET = ["--model", "claude-sonnet-4-6"];

// Context limits and model fallback through the BUILT binary: a models file shrinks the context
// window (both sides, or the simulator's only) so compaction and the limit need no megabytes.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-limits-"));
  // About 20k simulator tokens: over the auto-compact line of a 24k window once it is read.
  const words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda"];
  const lines = Array.from(
    { length: 700 },
    (_, i) => `line ${i}: ${Array.from({ length: 10 }, (_, j) => words[(i * 7 + j * 3) % 8]).join(" ")}`,
  );
  await writeFile(join(dir, "big.md"), `# Big notes\n${lines.join("\n")}\n`);
  await writeFile(
    join(dir, "small-window.json"),
    JSON.stringify([{ id: "claude-sonnet-4-6", contextWindow: 28_000, maxOutputTokens: 2_000 }]),
  );
  await writeFile(
    join(dir, "tiny-window.json"),
    JSON.stringify([{ id: "claude-sonnet-4-6", contextWindow: 3_000, maxOutputTokens: 1_000 }]),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("forkloop run: context limits and fallback", () => {
  it("R-C7: FORKLOOP_MODELS with a 28k window → auto-compaction, a system/compact_boundary line, and the run completes", async () => {
    const result = await runCliInProcess(
      ["run", ...SONNET, "Summarize big.md", "--output-format", "stream-json"],
      {
        cwd: dir,
        env: { FORKLOOP_MODELS: "small-window.json" },
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const lines = streamJsonLines(result.stdout);
    const boundary = lines.find((line) => line.type === "system" && line.subtype === "compact_boundary");
    expect(boundary).toMatchObject({ compact_metadata: { trigger: "auto" } });
    // R-C4: a compaction shrinks the context below the auto-compact line (28k − 2k − 13k = 13k).
    const { pre_tokens, post_tokens } = (
      boundary as { compact_metadata: { pre_tokens: number; post_tokens: number } }
    ).compact_metadata;
    expect(post_tokens).toBeLessThan(pre_tokens);
    expect(post_tokens).toBeLessThan(13_000);
    expect(lines.at(-1)).toMatchObject({
      type: "result",
      terminal_reason: "completed",
      // The client's model info is the file's too: the reported window is the small one.
      modelUsage: { "claude-sonnet-4-6": { contextWindow: 28_000 } },
    });
    // Without the file the same run has a 1M window and never compacts.
    const unbounded = await runCliInProcess(
      ["run", ...SONNET, "Summarize big.md", "--output-format", "stream-json"],
      {
        cwd: dir,
      },
    );
    expect(unbounded.code, unbounded.stderr).toBe(0);
    expect(unbounded.stdout).not.toContain("compact_boundary");
  });

  it("R-L6: a prompt the model's window cannot hold (forkloop sim --models, 3k window) → prompt_too_long, exit code 8", async () => {
    await withSim(dir, ["--models", "tiny-window.json"], async (sim) => {
      const result = await runCliInProcess(
        ["run", ...SONNET, "Hello there", "--output-format", "stream-json"],
        {
          cwd: dir,
          env: sim.env,
        },
      );
      expect(result.code, result.stderr).toBe(8);
      expect(streamJsonLines(result.stdout).at(-1)).toMatchObject({
        type: "result",
        is_error: true,
        terminal_reason: "prompt_too_long",
      });
      expect((await sim.requests()).map((record) => record.status)).toContain(400);
    });
  });

  it("R-L8: --fallback-model: the primary answers 529 every time (scenario), so the run switches and completes on the fallback", async () => {
    const scenario = await writeScenario(
      join(dir, "overloaded-sonnet.json"),
      [{ match: { model: "claude-sonnet-4-6" }, fault: "529" }],
      "answered on the fallback (scripted by the simulator)",
    );
    await withSim(dir, ["--scenario", scenario], async (sim) => {
      const result = await runCliInProcess(
        [
          "run",
          ...SONNET,
          "Hello there",
          "--fallback-model",
          "claude-haiku-4-5",
          "--output-format",
          "stream-json",
        ],
        { cwd: dir, env: sim.env },
      );
      expect(result.code, result.stderr).toBe(0);
      const lines = streamJsonLines(result.stdout);
      expect(lines.find((line) => line.type === "system" && line.subtype === "model_fallback")).toMatchObject(
        {
          from: "claude-sonnet-4-6",
          to: "claude-haiku-4-5",
        },
      );
      expect(lines.at(-1)).toMatchObject({
        type: "result",
        terminal_reason: "completed",
        result: "answered on the fallback (scripted by the simulator)",
      });
      const models = (await sim.requests()).map(
        (record) => `${record.status} ${(JSON.parse(record.rawBody) as { model: string }).model}`,
      );
      // Three 529s in a row on the primary trigger the fallback (R-L8), which answers.
      expect(models).toEqual([
        "529 claude-sonnet-4-6",
        "529 claude-sonnet-4-6",
        "529 claude-sonnet-4-6",
        "200 claude-haiku-4-5",
      ]);
    });
  });

  it("a bad models file is exit 2 naming the file, the entry and the fix", async () => {
    await writeFile(
      join(dir, "bad-models.json"),
      JSON.stringify([{ id: "my-tiny-model", contextWindow: 1000 }]),
    );
    const result = await runCliInProcess(["run", ...SONNET, "hi"], {
      cwd: dir,
      env: { FORKLOOP_MODELS: "bad-models.json" },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /FORKLOOP_MODELS bad-models\.json: 0: "my-tiny-model" is not a known model, so give contextWindow and maxOutputTokens\. Example:/,
    );
    const sim = await runCliInProcess(["sim", "--models", "missing.json"], { cwd: dir });
    expect(sim.code).toBe(2);
    expect(sim.stderr).toContain("--models missing.json: cannot read it (ENOENT)");
  });
});
