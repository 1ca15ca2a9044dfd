import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StreamJsonLine } from "@forkloop/cli";
import {
  runCliInProcess,
  type SimHandle,
  type SimRequestRecord,
  streamJsonLines,
  withSim,
} from "@forkloop/cli/testing";
import { forkPrefixDifferences } from "@forkloop/orchestrator/testing";
import { countTokens } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The models file and the windows below are sized for Sonnet 4.6 (its tokenizer), not for run's
// default model (Claude Code's newest Opus, R-X2), so every run names it.
const SONNET = ["--model", "claude-sonnet-4-6"];

// Manual compaction through the BUILT binary: `forkloop run --resume <id> "/compact …"`
// against a `forkloop sim` process whose request log shows what each step sent.

/** A word only big.md holds: a request that carries the old history carries it. */
const MARKER = "zebraquartz";
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-compact-"));
  const lines = Array.from({ length: 300 }, (_, i) => `line ${i}: ${MARKER} alpha beta gamma delta omega`);
  await writeFile(join(dir, "big.md"), `# Notes\n${lines.join("\n")}\n`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function newSession(sim: SimHandle): Promise<string> {
  const first = await runCliInProcess(
    ["run", ...SONNET, "Summarize big.md", "--output-format", "stream-json"],
    {
      cwd: dir,
      env: sim.env,
    },
  );
  expect(first.code, first.stderr).toBe(0);
  const init = streamJsonLines(first.stdout)[0];
  if (init?.type !== "system" || init.subtype !== "init") throw new Error("expected the init line");
  return init.session_id;
}

/** Numbered lines (a newline after each) that the simulator's tokenizer counts as at least `tokens`. */
function linesOfTokens(tokens: number, line: (i: number) => string): string {
  let text = "";
  for (let i = 0, counted = 0; counted < tokens; i++) {
    const next = `${line(i)}\n`;
    text += next;
    counted += countTokens(next);
  }
  return text;
}

/** A response's whole context as the simulator counted it (what forkloop measures the line on). */
function contextTokens(usage: SimRequestRecord["usage"] | undefined): number {
  if (!usage) throw new Error("expected the response's usage");
  return (
    usage.input_tokens +
    usage.cache_creation_input_tokens +
    usage.cache_read_input_tokens +
    usage.output_tokens
  );
}

async function mainRequests(sim: SimHandle, source: string) {
  return (await sim.requests()).filter(
    (record) => record.path === "/v1/messages" && record.querySource === source,
  );
}

describe('forkloop run "/compact [instructions]"', () => {
  it("R-C4/R-F3: /compact on a resumed session → a manual compact_boundary (post < pre), one cache-safe compact request with the instructions, and the next turn sends the summary, not the old history", async () => {
    await withSim(dir, [], async (sim) => {
      const sessionId = await newSession(sim);
      const parent = (await mainRequests(sim, "sdk")).at(-1);
      if (!parent) throw new Error("expected the first run's requests");
      expect(parent.rawBody).toContain(MARKER);

      const compact = await runCliInProcess(
        [
          "run",
          ...SONNET,
          "--resume",
          sessionId,
          "/compact keep the API names",
          "--output-format",
          "stream-json",
        ],
        { cwd: dir, env: sim.env },
      );
      expect(compact.code, compact.stderr).toBe(0);
      const lines = streamJsonLines(compact.stdout);
      // R-K2: Claude Code's stream of /compact — compacting status, status with the outcome, init,
      // the boundary, the summary the history starts with, the command's output, the result.
      expect(lines.map((line) => `${line.type}/${"subtype" in line ? line.subtype : ""}`)).toEqual([
        "system/status",
        "system/status",
        "system/init",
        "system/compact_boundary",
        "user/",
        "user/",
        "result/success",
      ]);
      expect(lines[0]).toMatchObject({ status: "compacting" });
      expect(lines[1]).toMatchObject({ status: null, compact_result: "success" });
      const boundary = lines[3] as Extract<StreamJsonLine, { subtype: "compact_boundary" }>;
      expect(boundary.compact_metadata.trigger).toBe("manual");
      expect(boundary.compact_metadata.post_tokens).toBeLessThan(boundary.compact_metadata.pre_tokens);
      expect(lines[5]).toMatchObject({
        message: { content: "<local-command-stdout>Compacted </local-command-stdout>" },
        isReplay: true,
        local_command_run: { command: "compact", args: "keep the API names" },
      });
      // R-X1: Claude Code's result of a local command: nothing to say, the command's name, the
      // session's sub-agent counts, and no API error status or terminal reason (no turn ran).
      expect(lines[6]).toMatchObject({
        num_turns: 0,
        is_error: false,
        session_id: sessionId,
        result: "",
        local_command: "compact",
        subagent_stats: { spawned: 0 },
      });
      expect(lines[6]).not.toHaveProperty("terminal_reason");
      expect(lines[6]).not.toHaveProperty("api_error_status");

      // No model turn: one compact request, and it is the parent's exact prefix + the instruction.
      expect(await mainRequests(sim, "sdk")).toHaveLength(2);
      const compacts = await mainRequests(sim, "compact");
      expect(compacts).toHaveLength(1);
      const request = compacts[0]!;
      expect(forkPrefixDifferences(parent.rawBody, request.rawBody)).toEqual([]);
      const instruction = (JSON.parse(request.rawBody) as { messages: unknown[] }).messages.at(-1);
      expect(JSON.stringify(instruction)).toContain("keep the API names");
      expect(request.usage?.cache_read_input_tokens).toBeGreaterThan(0);

      // The next resumed turn starts from the summary: big.md's contents are no longer sent.
      const next = await runCliInProcess(["run", ...SONNET, "--resume", sessionId, "What is left to do?"], {
        cwd: dir,
        env: sim.env,
      });
      expect(next.code, next.stderr).toBe(0);
      const sent = (await mainRequests(sim, "sdk"))[2];
      if (!sent) throw new Error("expected the resumed turn's request");
      const messages = (JSON.parse(sent.rawBody) as { messages: { role: string; content: unknown }[] })
        .messages;
      expect(messages[0]?.role).toBe("user");
      expect(JSON.stringify(messages[0]?.content)).toContain("<summary>");
      expect(sent.rawBody).toContain("What is left to do?");
      expect(sent.rawBody).not.toContain(MARKER);
    });
  });

  it("R-F3: run --resume over the auto-compact line of a small models-file window (34k) → the resumed turn opens with a cache-safe compact request, then sends the summary", async () => {
    // 34k window, 2k output cap → auto-compact line 19k (R-C7). The first turn (~12.4k tokens of
    // pasted text, ~17.4k with today's tool definitions) stays under it; the resumed one (+3k)
    // starts over it, with no tool call at all, and the summary brings it well under.
    await writeFile(
      join(dir, "window-34k.json"),
      JSON.stringify([{ id: "claude-sonnet-4-6", contextWindow: 34_000, maxOutputTokens: 2_000 }]),
    );
    await withSim(dir, ["--models", "window-34k.json"], async (sim) => {
      const env = { ...sim.env, FORKLOOP_MODELS: "window-34k.json" };
      const pasted = Array.from({ length: 1030 }, (_, i) => `${MARKER} note ${i} alpha beta gamma delta`);
      const first = await runCliInProcess(["run", ...SONNET, "--output-format", "stream-json"], {
        cwd: dir,
        env,
        stdin: `Review these release notes:\n${pasted.join("\n")}\n`,
      });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).not.toContain("compact_boundary");
      const init = streamJsonLines(first.stdout)[0];
      if (init?.type !== "system" || init.subtype !== "init") throw new Error("expected the init line");
      const firstRun = await mainRequests(sim, "sdk");
      expect(firstRun).toHaveLength(1);
      const parent = firstRun[0]!;

      const resumed = await runCliInProcess(
        ["run", ...SONNET, "--resume", init.session_id, "--output-format", "stream-json"],
        {
          cwd: dir,
          env,
          stdin: `Now list the risky notes.\n${"risk means a breaking change in the public API\n".repeat(300)}`,
        },
      );
      expect(resumed.code, resumed.stderr).toBe(0);
      const lines = streamJsonLines(resumed.stdout);
      expect(
        lines.find((line) => line.type === "system" && line.subtype === "compact_boundary"),
      ).toMatchObject({
        compact_metadata: { trigger: "auto" },
      });
      expect(lines.at(-1)).toMatchObject({ type: "result", terminal_reason: "completed" });
      const turn = (await sim.requests()).filter((record) => record.path === "/v1/messages").slice(1);
      expect(turn.map((record) => `${record.querySource} ${record.status}`)).toEqual([
        "compact 200",
        "sdk 200",
      ]);
      expect(forkPrefixDifferences(parent.rawBody, turn[0]!.rawBody)).toEqual([]);
      expect(turn[0]!.usage?.cache_read_input_tokens).toBeGreaterThan(10_000);
      // The 1,030 pasted lines are gone: only the summary's short quote of the first request is left.
      expect(turn[1]!.rawBody).toContain("<summary>");
      expect(parent.rawBody.split(MARKER).length - 1).toBe(1030);
      expect(turn[1]!.rawBody.split(MARKER).length - 1).toBeLessThan(10);
    });
  });

  it.each([
    { how: "--autocompact 100k", args: ["--autocompact", "100k"], windowEnv: {} },
    // Claude Code's variable wins over the flag (its env reader comes first), under 100k reads as 100k.
    {
      how: "CLAUDE_CODE_AUTO_COMPACT_WINDOW=50k (over --autocompact 150k)",
      args: ["--autocompact", "150k"],
      windowEnv: { CLAUDE_CODE_AUTO_COMPACT_WINDOW: "50k" },
    },
  ])(
    "R-C7, R-X3: $how lowers the auto-compact line of a 200k window (185k → 85k): a resumed turn over it compacts first",
    async ({ args, windowEnv }) => {
      // 200k window, 2k output cap: the model's own line is 185k; with --autocompact 100k it is
      // min(200k, 100k) − 2k − 13k = 85k (Claude Code's rule). The first turn (66k pasted) stays
      // under either; the resumed one is sized from what the simulator counted for the first (its
      // tokenizer; Sonnet 4.6's counts 1:1) to land 6k over 85k and far under 185k, whatever the
      // system prompt and tools add. It stays under the kept tail's share of the line (30%, ~25k),
      // so the compaction keeps it verbatim and succeeds.
      const cappedLine = 100_000 - 2_000 - 13_000;
      const modelLine = 200_000 - 2_000 - 13_000;
      await writeFile(
        join(dir, "window-200k.json"),
        JSON.stringify([{ id: "claude-sonnet-4-6", contextWindow: 200_000, maxOutputTokens: 2_000 }]),
      );
      await withSim(dir, ["--models", "window-200k.json"], async (sim) => {
        const env = { ...sim.env, FORKLOOP_MODELS: "window-200k.json", ...windowEnv };
        const window = [...args, "--output-format", "stream-json"];
        const notes = linesOfTokens(66_000, (i) => `${MARKER} note ${i} alpha beta gamma delta`);
        const first = await runCliInProcess(["run", ...SONNET, ...window], {
          cwd: dir,
          env,
          stdin: `Review these release notes:\n${notes}`,
        });
        expect(first.code, first.stderr).toBe(0);
        expect(first.stdout).not.toContain("compact_boundary");
        const init = streamJsonLines(first.stdout)[0];
        if (init?.type !== "system" || init.subtype !== "init") throw new Error("expected the init line");
        const [firstTurn] = (await sim.requests()).filter((record) => record.path === "/v1/messages");
        const counted = contextTokens(firstTurn?.usage);
        expect(counted, "the first turn's context, as the simulator counted it").toBeLessThan(
          cappedLine - 10_000,
        );
        const risks = linesOfTokens(
          cappedLine - counted + 15_000,
          () => "risk means a breaking change in the public API",
        );
        const resumed = await runCliInProcess(["run", ...SONNET, "--resume", init.session_id, ...window], {
          cwd: dir,
          env,
          stdin: `Now list the risky notes.\n${risks}`,
        });
        expect(resumed.code, resumed.stderr).toBe(0);
        const boundary = streamJsonLines(resumed.stdout).find(
          (line) => line.type === "system" && line.subtype === "compact_boundary",
        ) as Extract<StreamJsonLine, { subtype: "compact_boundary" }> | undefined;
        expect(boundary?.compact_metadata.trigger).toBe("auto");
        // Over the capped line, under the model's own.
        expect(boundary?.compact_metadata.pre_tokens).toBeGreaterThanOrEqual(cappedLine);
        expect(boundary?.compact_metadata.pre_tokens).toBeLessThan(modelLine);
        const turn = (await sim.requests()).filter((record) => record.path === "/v1/messages").slice(1);
        expect(turn.map((record) => `${record.querySource} ${record.status}`)).toEqual([
          "compact 200",
          "sdk 200",
        ]);
      });
    },
  );

  it("R-C4 (manual), R-X1: text output is Claude Code's empty result line; a compaction that fails says so on stdout, exit 0 (Claude Code's); without --resume or with an unknown command, exit 2 naming the known ones", async () => {
    await withSim(dir, [], async (sim) => {
      const sessionId = await newSession(sim);
      const compact = await runCliInProcess(["run", ...SONNET, "--resume", sessionId, "/compact"], {
        cwd: dir,
        env: sim.env,
      });
      expect(compact.code, compact.stderr).toBe(0);
      expect(compact.stdout).toBe("\n");

      // Right after a compaction, a manual one summarises the rest whole (as Claude Code's does,
      // R-X1); a summary that does not shrink it is a failure, the session unchanged: as Claude
      // Code's, the result says so on stdout and the exit code is 0.
      const again = await runCliInProcess(["run", ...SONNET, "--resume", sessionId, "/compact again"], {
        cwd: dir,
        env: sim.env,
      });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toMatch(
        /^Error during compaction: compaction would not shrink the context \(.*\)\n$/,
      );
      expect(again.stderr).not.toContain("/compact");

      const unknown = await runCliInProcess(["run", ...SONNET, "--resume", sessionId, "/clear"], {
        cwd: dir,
        env: sim.env,
      });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain(
        "unknown slash command /clear. Built in: /compact [instructions]; custom commands are read from .claude/commands/clear.md",
      );
      const fresh = await runCliInProcess(["run", ...SONNET, "/compact"], { cwd: dir, env: sim.env });
      expect(fresh.code).toBe(2);
      expect(fresh.stderr).toContain("--resume <session>");
      // None of the last two reached the simulator: the first run's two requests and two compact requests.
      expect((await sim.requests()).filter((record) => record.path === "/v1/messages")).toHaveLength(4);
    });
  });
});
