import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  batchStateDir,
  runCliInProcess,
  type SimHandle,
  startCliInProcess,
  startRedisServer,
  withSim,
} from "@forkloop/cli/testing";
import { resolveModelAlias } from "@forkloop/loop-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// What every agent's loop does, reachable from the command line — thinking
// (R-L17), the tool-use summary model (R-L18), API context editing for the microcompact stage
// (R-C2) and removing the fork tools — asserted on what a `forkloop sim` process was sent.

type SimRecord = Awaited<ReturnType<SimHandle["requests"]>>[number];
interface Body {
  readonly model: string;
  readonly thinking?: unknown;
  readonly context_management?: { edits: { type: string; keep?: unknown; trigger?: unknown }[] };
  readonly tools?: { name: string }[];
}

const bodies = (records: readonly SimRecord[], querySource: string): Body[] =>
  records
    .filter((record) => record.path === "/v1/messages" && record.querySource === querySource)
    .map((record) => JSON.parse(record.rawBody) as Body);

/** A batch of the two notes with thinking, the summary model and context editing. */
const LOOP_BATCH = [
  "batch",
  "--files",
  "*.md",
  "--prompt",
  "Summarize {{file}}",
  "--max-thinking-tokens",
  "2048",
  "--summary-model",
  "claude-haiku-4-5",
  "--context-editing",
];

/** Every item request carries the budget and context editing; its tool batches go to the summary model. */
function expectItemsCarryLoop(records: readonly SimRecord[]): void {
  const items = bodies(records, "batch");
  expect(items.length).toBeGreaterThanOrEqual(4);
  for (const body of items) {
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    // With thinking on, keeping all thinking goes first (R-X2), then the tool clearing.
    expect(body.context_management?.edits.map((edit) => edit.type)).toEqual([
      "clear_thinking_20251015",
      "clear_tool_uses_20250919",
    ]);
  }
  const summaries = bodies(records, "tool_use_summary");
  expect(summaries.length).toBeGreaterThanOrEqual(2);
  expect(summaries.every((body) => body.model === "claude-haiku-4-5")).toBe(true);
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-loop-flags-"));
  await writeFile(join(dir, "notes.md"), "# Notes\nThe release is on Friday.\n");
  await writeFile(join(dir, "todo.md"), "# Todo\nShip the parser.\n");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("loop options from the CLI", () => {
  it("run: --max-thinking-tokens, --summary-model (an alias), --context-editing and --disallowed-tools Agent reach every main-loop request", async () => {
    await withSim(dir, [], async (sim) => {
      const result = await runCliInProcess(
        [
          "run",
          "Summarize notes.md",
          // A model that takes a thinking budget (Opus 5.5, run's default, takes only adaptive thinking).
          "--model",
          "claude-sonnet-4-6",
          "--max-thinking-tokens",
          "2048",
          "--summary-model",
          "haiku",
          "--context-editing",
          "--disallowed-tools",
          "Agent",
        ],
        { cwd: dir, env: sim.env },
      );
      expect(result.code, result.stderr).toBe(0);
      const records = await sim.requests();
      const main = bodies(records, "sdk");
      expect(main.length).toBeGreaterThanOrEqual(2);
      for (const body of main) {
        // R-L17: the budget as given.
        expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
        // R-C2 by the API, at the client stage's lines: the newest 5 results kept.
        expect(body.context_management?.edits).toEqual([
          { type: "clear_thinking_20251015", keep: "all" },
          expect.objectContaining({
            type: "clear_tool_uses_20250919",
            keep: { type: "tool_uses", value: 5 },
          }),
        ]);
        // A bare deny rule removes the fork tool, as it removes a built-in one.
        expect(body.tools?.map((tool) => tool.name)).not.toContain("Agent");
        expect(body.tools?.map((tool) => tool.name)).toContain("Read");
      }
      // R-L18: the Read batch was summarized by the small model, `haiku` resolved as Claude Code does.
      const summaries = bodies(records, "tool_use_summary");
      expect(summaries.length).toBeGreaterThanOrEqual(1);
      expect(summaries.every((body) => body.model === resolveModelAlias("haiku"))).toBe(true);
      expect(resolveModelAlias("haiku")).toMatch(/^claude-haiku-/);
    });
  });

  it("run: the settings keys alwaysThinkingEnabled and toolUseSummaryModel apply; --thinking disabled and --disallowed-tools Task override and remove; bad values are exit 2 naming the fix", async () => {
    const project = join(dir, "with-settings");
    await mkdir(join(project, ".forkloop"), { recursive: true });
    await writeFile(join(project, "notes.md"), "# Notes\nThe release is on Friday.\n");
    await writeFile(
      join(project, ".forkloop", "settings.json"),
      JSON.stringify({ alwaysThinkingEnabled: true, toolUseSummaryModel: "claude-haiku-4-5" }),
    );
    await withSim(project, [], async (sim) => {
      const fromSettings = await runCliInProcess(["run", "Summarize notes.md", "--trust-project"], {
        cwd: project,
        env: sim.env,
      });
      expect(fromSettings.code, fromSettings.stderr).toBe(0);
      const first = await sim.requests();
      const main = bodies(first, "sdk");
      expect(main.length).toBeGreaterThanOrEqual(2);
      for (const body of main) {
        expect(body.thinking).toEqual({ type: "adaptive" });
        // No context editing: only Claude Code's keep-all-thinking edit (R-X2).
        expect(body.context_management).toEqual({
          edits: [{ type: "clear_thinking_20251015", keep: "all" }],
        });
        expect(body.tools?.map((tool) => tool.name)).toContain("Agent");
      }
      expect(bodies(first, "tool_use_summary").length).toBeGreaterThanOrEqual(1);

      const overridden = await runCliInProcess(
        [
          "run",
          "Summarize notes.md",
          "--trust-project",
          "--thinking",
          "disabled",
          "--disallowed-tools",
          "Task",
        ],
        { cwd: project, env: sim.env },
      );
      expect(overridden.code, overridden.stderr).toBe(0);
      const later = bodies((await sim.requests()).slice(first.length), "sdk");
      expect(later.length).toBeGreaterThanOrEqual(2);
      for (const body of later) {
        expect(body.thinking).toBeUndefined();
        expect(body.tools?.map((tool) => tool.name)).not.toContain("Agent");
      }
    });

    const noBudget = await runCliInProcess(["run", "Hi", "--thinking", "enabled"], { cwd: dir });
    expect(noBudget.code).toBe(2);
    expect(noBudget.stderr).toContain("--max-thinking-tokens");
    const tooSmall = await runCliInProcess(["run", "Hi", "--max-thinking-tokens", "500"], { cwd: dir });
    expect(tooSmall.code).toBe(2);
    expect(tooSmall.stderr).toContain("at least 1024");
    const badSetting = join(dir, "bad-setting");
    await mkdir(join(badSetting, ".forkloop"), { recursive: true });
    await writeFile(
      join(badSetting, ".forkloop", "settings.json"),
      JSON.stringify({ maxThinkingTokens: 10 }),
    );
    const badFile = await runCliInProcess(["run", "Hi"], { cwd: badSetting });
    expect(badFile.code).toBe(2);
    expect(badFile.stderr).toContain("maxThinkingTokens");
  });

  it("batch: every item's requests carry the thinking budget and context editing, its tool batches the summary model; batch.json keeps them for --resume, where a flag replaces one and keeps the others (R-R7)", async () => {
    await withSim(dir, [], async (sim) => {
      const result = await runCliInProcess([...LOOP_BATCH, "--id", "loop-flags"], { cwd: dir, env: sim.env });
      expect(result.code, result.stderr).toBe(0);
      expectItemsCarryLoop(await sim.requests());
      const spec = JSON.parse(await readFile(join(batchStateDir(dir, "loop-flags"), "batch.json"), "utf8"));
      expect(spec.loop).toEqual({
        thinking: { type: "enabled", budget_tokens: 2048 },
        toolUseSummaryModel: "claude-haiku-4-5",
        contextEditing: true,
      });
    });
    const changed = await runCliInProcess(
      ["batch", "--resume", "loop-flags", "--max-thinking-tokens", "4096"],
      {
        cwd: dir,
      },
    );
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stderr).toContain(
      "forkloop batch loop-flags: --max-thinking-tokens 4096 (was 2048) replaces the setting it started with",
    );
    const spec = JSON.parse(await readFile(join(batchStateDir(dir, "loop-flags"), "batch.json"), "utf8"));
    expect(spec.loop).toEqual({
      thinking: { type: "enabled", budget_tokens: 4096 },
      toolUseSummaryModel: "claude-haiku-4-5",
      contextEditing: true,
    });
  });

  it("batch --queue: a forkloop worker runs every item with the loop options the producer stored (batch.json's loop, through Redis)", async () => {
    const redis = await startRedisServer();
    try {
      await withSim(dir, [], async (sim) => {
        // The worker reads nothing from flags or its own settings: only the queued batch's spec.
        const worker = startCliInProcess(["worker", "--queue", redis.url, "--concurrency", "2"], {
          cwd: dir,
          env: sim.env,
        });
        try {
          const producer = await runCliInProcess(
            [...LOOP_BATCH, "--id", "loop-flags-queued", "--queue", redis.url],
            {
              cwd: dir,
              env: sim.env,
            },
          );
          expect(producer.code, producer.stderr).toBe(0);
        } finally {
          await worker.stop();
        }
        expectItemsCarryLoop(await sim.requests());
      });
    } finally {
      await redis.stop();
    }
  }, 60_000);
});
