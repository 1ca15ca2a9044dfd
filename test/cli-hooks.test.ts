import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  batchStateDir,
  runCliInProcess,
  sessionsStateDir,
  streamJsonLines,
  withSim,
  writeScenario,
} from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The models file and the windows below are sized for Sonnet 4.6 (its tokenizer), not for run's
// default model (Claude Code's newest Opus, R-X2), so every run names it.
const SONNET = ["--model", "claude-sonnet-4-6"];

// R-X4: every hook event fires where Claude Code fires it, for `run` and for a batch
// item, through the CLI. Each settings hook is a shell command that appends its stdin (the
// event's JSON input) to hooks.jsonl; two of them also answer with text for the model.

const PARTS = 3;
// Sized for the tool definitions every request carries (WebSearch included): a compaction must
// bring the history under the auto-compact line, or it counts as failed and SessionStart does not fire.
const WINDOW_28K = [{ id: "claude-sonnet-4-6", contextWindow: 28_000, maxOutputTokens: 2_000 }];
const SUMMARY =
  "<summary>## Goal and constraints\nAudit item: read every part file in parts/ and report.</summary>";

/** Appends the hook's input to hooks.jsonl (one write: parallel hooks do not interleave). */
const LOG = `input=$(cat); printf '%s\\n' "$input" >> "$FORKLOOP_PROJECT_DIR/hooks.jsonl"`;
const hook = (command: string) => [{ hooks: [{ type: "command", command }] }];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-hooks-"));
  await mkdir(join(dir, "parts"), { recursive: true });
  for (let part = 1; part <= PARTS; part++) {
    const lines = Array.from({ length: 250 }, (_, i) => `line ${i} of part ${part}: alpha beta gamma delta`);
    await writeFile(join(dir, "parts", `part${part}.md`), `PART-${part} begins here\n${lines.join("\n")}\n`);
  }
  await writeFile(join(dir, "window-28k.json"), JSON.stringify(WINDOW_28K));
  await writeFile(join(dir, "items.jsonl"), `${JSON.stringify({ n: 1 })}\n`);
  await mkdir(join(dir, ".forkloop"), { recursive: true });
  await writeFile(
    join(dir, ".forkloop", "settings.json"),
    JSON.stringify({
      hooks: {
        SessionStart: hook(`${LOG}; echo 'Session note: the marigold convention applies.'`),
        // Exit 2 blocks the prompt (stderr is the reason); plain stdout is context for the model.
        UserPromptSubmit: hook(
          `${LOG}; case "$input" in *forbidden*) echo 'forbidden prompts are refused' >&2; exit 2;; esac; echo 'Remember the code word tulip.'`,
        ),
        PreToolUse: hook(LOG),
        PostToolUse: hook(LOG),
        PreCompact: hook(LOG),
        PostCompact: hook(LOG),
        Stop: hook(LOG),
        SubagentStart: hook(LOG),
        SubagentStop: hook(LOG),
      },
    }),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type HookInput = Record<string, unknown> & { hook_event_name: string };

/** The hook inputs logged since the last call (the log is cleared each time). */
async function takeLog(): Promise<HookInput[]> {
  const path = join(dir, "hooks.jsonl");
  const text = await readFile(path, "utf8").catch(() => "");
  await writeFile(path, "");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as HookInput);
}

function readingRules(querySource: string, last: Record<string, unknown>): Record<string, unknown>[] {
  const rules: Record<string, unknown>[] = [];
  for (let part = PARTS; part >= 1; part--) {
    rules.push({
      match: { querySource, lastToolResult: `PART-${part} ` },
      reply: {
        content: [
          part === PARTS
            ? last
            : { type: "tool_use", name: "Read", input: { file_path: `parts/part${part + 1}.md` } },
        ],
      },
    });
  }
  rules.push({
    match: { querySource },
    reply: { content: [{ type: "tool_use", name: "Read", input: { file_path: "parts/part1.md" } }] },
  });
  return rules;
}

const events = (log: readonly HookInput[]) => log.map((input) => input.hook_event_name);
const only = (log: readonly HookInput[], event: string) =>
  log.filter((input) => input.hook_event_name === event);

describe("hook events through the CLI (R-X4)", () => {
  it("run: SessionStart (startup, resume, compact), UserPromptSubmit (adds context, can block), PreToolUse/PostToolUse, PreCompact (auto, manual), SubagentStop and Stop, with Claude Code's input fields", async () => {
    const scenario = await writeScenario(
      join(dir, "run.json"),
      [
        { match: { querySource: "compact" }, reply: { content: [{ type: "text", text: SUMMARY }] } },
        {
          match: { querySource: "sdk", lastToolResult: "[Subagent hand-back]" },
          reply: { content: [{ type: "text", text: "Audit complete." }] },
        },
        ...readingRules("sdk", {
          type: "tool_use",
          name: "Agent",
          input: { description: "Say hello", prompt: "Say hello to the parent." },
        }),
      ],
      "hello from the sub-agent (scripted by the simulator)",
    );
    await withSim(dir, ["--models", "window-28k.json", "--scenario", scenario], async (sim) => {
      const env = { ...sim.env, FORKLOOP_MODELS: "window-28k.json" };
      await takeLog();
      const first = await runCliInProcess(
        [
          "run",
          ...SONNET,
          "Audit item 1: read every part file in parts/ and report",
          "--output-format",
          "stream-json",
        ],
        { cwd: dir, env },
      );
      expect(first.code, first.stderr).toBe(0);
      // SessionStart's hook runs come first (system/hook_*, as in Claude Code), then the init line.
      const init = streamJsonLines(first.stdout).find(
        (line) => line.type === "system" && line.subtype === "init",
      );
      if (init?.type !== "system" || init.subtype !== "init") throw new Error("expected the init line");
      const sessionId = init.session_id;
      const transcript = join(sessionsStateDir(dir), `${sessionId}.fltr`);
      const log = await takeLog();
      // SessionStart first, then the prompt; Stop last.
      expect(events(log).slice(0, 2)).toEqual(["SessionStart", "UserPromptSubmit"]);
      expect(events(log).at(-1)).toBe("Stop");
      // PreCompact and PostCompact carry no permission_mode (Claude Code 2.1.332).
      const observed = { session_id: sessionId, transcript_path: transcript, cwd: dir };
      const common = { ...observed, permission_mode: "default" };
      expect(log[0]).toEqual({
        ...common,
        hook_event_name: "SessionStart",
        source: "startup",
        model: "claude-sonnet-4-6",
      });
      expect(log[1]).toEqual({
        ...common,
        hook_event_name: "UserPromptSubmit",
        // Claude Code 2.1.332's: the prompt the hooks of a turn belong to (not SessionStart's).
        prompt_id: expect.any(String),
        prompt: "Audit item 1: read every part file in parts/ and report",
      });
      expect(only(log, "PreToolUse")[0]).toMatchObject({
        ...common,
        tool_name: "Read",
        // The input as the tool runs it: the path backfilled to an absolute one (R-T1).
        tool_input: { file_path: join(dir, "parts", "part1.md") },
        tool_use_id: expect.any(String),
      });
      expect(only(log, "PostToolUse")[0]).toMatchObject({
        tool_name: "Read",
        tool_response: expect.anything(),
      });
      // The reads push the main loop over its 9k auto-compact line: PreCompact, then SessionStart
      // compact, then PostCompact with the summary, as Claude Code orders them (R-X1).
      expect(only(log, "PreCompact")[0]).toEqual({
        ...observed,
        hook_event_name: "PreCompact",
        trigger: "auto",
        custom_instructions: null,
        prompt_id: expect.any(String),
      });
      expect(only(log, "SessionStart").map((input) => input.source)).toEqual([
        "startup",
        ...only(log, "PreCompact").map(() => "compact"),
      ]);
      expect(only(log, "PostCompact")[0]).toEqual({
        ...observed,
        hook_event_name: "PostCompact",
        trigger: "auto",
        compact_summary: expect.stringMatching(/\S/),
        prompt_id: expect.any(String),
      });
      const compactEvents = events(log).filter((event) => /Compact|SessionStart/.test(event));
      expect(compactEvents.slice(1, 4)).toEqual(["PreCompact", "SessionStart", "PostCompact"]);
      // R-X1: the summary fork starts no sub-agent a hook hears of; its stop is a SubagentStop with
      // an empty agent_type, in the session's permission mode, as Claude Code's summariser's.
      expect(only(log, "SubagentStart").map((input) => input.agent_type)).toEqual(["general-purpose"]);
      const summaries = only(log, "SubagentStop").filter((input) => input.agent_type === "");
      expect(summaries).toHaveLength(only(log, "PreCompact").length);
      expect(summaries[0]).toMatchObject({
        ...common,
        stop_hook_active: false,
        agent_id: expect.stringMatching(/^compact-/),
        last_assistant_message: SUMMARY,
        agent_transcript_path: expect.stringContaining(sessionId),
      });
      const subagentStop = only(log, "SubagentStop").find((input) => input.agent_type !== "");
      expect(subagentStop).toMatchObject({
        ...common,
        stop_hook_active: false,
        agent_id: expect.stringMatching(/^agent-/),
        last_assistant_message: "hello from the sub-agent (scripted by the simulator)",
      });
      expect(subagentStop?.agent_transcript_path).toBe(
        join(sessionsStateDir(dir), sessionId, "agents", `${subagentStop?.agent_id}.fltr`),
      );
      expect(only(log, "Stop")).toEqual([
        {
          ...common,
          hook_event_name: "Stop",
          stop_hook_active: false,
          last_assistant_message: "Audit complete.",
          prompt_id: expect.any(String),
          effort: { level: expect.any(String) },
          background_tasks: [],
          session_crons: [],
        },
      ]);
      // What SessionStart and UserPromptSubmit printed reached the model with the prompt.
      const sent = (await sim.requests()).filter((record) => record.querySource === "sdk");
      expect(sent[0]?.rawBody).toContain("the marigold convention applies");
      expect(sent[0]?.rawBody).toContain("Remember the code word tulip.");

      // A resume starts with SessionStart resume; /compact fires PreCompact manual with the text.
      const compact = await runCliInProcess(
        ["run", ...SONNET, "--resume", sessionId, "/compact keep the part names"],
        {
          cwd: dir,
          env,
        },
      );
      expect(compact.code, compact.stderr).toBe(0);
      const resumed = await takeLog();
      // R-X1: a resumed session's SessionStart tells of its prompt cache, as Claude Code's: the
      // last reply was seconds ago (the cache is warm) and held the compacted context.
      expect(resumed[0]).toMatchObject({
        hook_event_name: "SessionStart",
        source: "resume",
        session_id: sessionId,
        seconds_since_last_response: expect.any(Number),
        context_tokens: expect.any(Number),
        prompt_cache_likely_expired: false,
        estimated_cache_write_usd: expect.any(Number),
      });
      expect(resumed[0]?.seconds_since_last_response).toBeLessThan(60);
      expect(resumed[0]?.context_tokens).toBeGreaterThan(1_000);
      expect(resumed[0]?.estimated_cache_write_usd).toBeGreaterThan(0);
      expect(only(resumed, "SubagentStop")).toMatchObject([
        { agent_type: "", last_assistant_message: SUMMARY },
      ]);
      expect(only(resumed, "SubagentStart")).toEqual([]);
      expect(only(resumed, "PreCompact")).toEqual([
        {
          ...observed,
          hook_event_name: "PreCompact",
          trigger: "manual",
          custom_instructions: "keep the part names",
          prompt_id: expect.any(String),
        },
      ]);

      // A blocking UserPromptSubmit drops the prompt: no model request, exit 5 (stopped by a hook).
      const before = (await sim.requests()).length;
      const blocked = await runCliInProcess(["run", ...SONNET, "do the forbidden thing"], { cwd: dir, env });
      expect(blocked.code).toBe(5);
      expect(blocked.stderr).toContain("forbidden prompts are refused");
      expect((await sim.requests()).length).toBe(before);
      expect(events(await takeLog())).toEqual(["SessionStart", "UserPromptSubmit"]);
    });
  }, 120_000);

  it("batch item: SessionStart (startup, compact), UserPromptSubmit, PreToolUse/PostToolUse, PreCompact and Stop fire for the item, as its own session", async () => {
    const scenario = await writeScenario(
      join(dir, "batch.json"),
      [
        { match: { querySource: "compact" }, reply: { content: [{ type: "text", text: SUMMARY }] } },
        ...readingRules("batch", { type: "text", text: "Item audited." }),
      ],
      "(unscripted)",
    );
    await withSim(dir, ["--models", "window-28k.json", "--scenario", scenario], async (sim) => {
      await takeLog();
      const run = await runCliInProcess(
        [
          "batch",
          "--items",
          "items.jsonl",
          "--prompt",
          "Audit item {{item.n}}: read every part file in parts/ and report",
          "--id",
          "hooked",
        ],
        { cwd: dir, env: { ...sim.env, FORKLOOP_MODELS: "window-28k.json" } },
      );
      expect(run.code, run.stderr).toBe(0);
      const log = await takeLog();
      const item = "item-";
      const observed = {
        session_id: expect.stringMatching(new RegExp(`^${item}`)),
        transcript_path: expect.stringMatching(
          new RegExp(`^${escapeRegExp(join(batchStateDir(dir, "hooked"), "transcripts"))}/.+\\.fltr$`),
        ),
        cwd: dir,
      };
      const common = { ...observed, permission_mode: "dontAsk" };
      expect(events(log).slice(0, 2)).toEqual(["SessionStart", "UserPromptSubmit"]);
      expect(log[0]).toEqual({
        ...common,
        hook_event_name: "SessionStart",
        source: "startup",
        model: "claude-sonnet-4-6",
      });
      expect(log[1]).toEqual({
        ...common,
        hook_event_name: "UserPromptSubmit",
        prompt: "Audit item 1: read every part file in parts/ and report",
      });
      expect(only(log, "PreToolUse")[0]).toMatchObject({ ...common, tool_name: "Read" });
      expect(only(log, "PostToolUse")[0]).toMatchObject({ ...common, tool_name: "Read" });
      expect(only(log, "PreCompact")[0]).toEqual({
        ...observed,
        hook_event_name: "PreCompact",
        trigger: "auto",
        custom_instructions: null,
      });
      expect(only(log, "SessionStart").map((input) => input.source)).toEqual([
        "startup",
        ...only(log, "PreCompact").map(() => "compact"),
      ]);
      expect(only(log, "SubagentStop")).toEqual([]);
      expect(only(log, "Stop")).toEqual([
        {
          ...common,
          hook_event_name: "Stop",
          stop_hook_active: false,
          last_assistant_message: "Item audited.",
          background_tasks: [],
          session_crons: [],
        },
      ]);
      expect(new Set(log.map((input) => input.session_id)).size).toBe(1);
      const first = (await sim.requests()).find((record) => record.querySource === "batch");
      expect(first?.rawBody).toContain("the marigold convention applies");
      expect(first?.rawBody).toContain("Remember the code word tulip.");
    });
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
