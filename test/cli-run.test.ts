import { access, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { streamJsonLineSchema } from "@forkloop/cli";
import { runCliInProcess as runCli, startCli, startSimInProcess, waitForOutput } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-run-"));
  await writeFile(join(dir, "notes.md"), "# Release notes\nexport const version = 3;\n");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function parseLines(stdout: string) {
  return stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("forkloop run (headless) on the embedded simulator", () => {
  let sessionId = "";

  it("stream-json: every line validates against the schema; init first, result last; exit 0", async () => {
    const result = await runCli(["run", "Summarize notes.md", "--output-format", "stream-json"], {
      cwd: dir,
    });
    expect(result.code, result.stderr).toBe(0);
    const lines = parseLines(result.stdout);
    for (const line of lines) {
      const parsed = streamJsonLineSchema.safeParse(line);
      expect(parsed.success, JSON.stringify(line)).toBe(true);
    }
    expect(lines[0]).toMatchObject({
      type: "system",
      subtype: "init",
      simulated: true,
      apiKeySource: "none",
    });
    // R-X2: Claude Code's default adaptive thinking puts a thinking block (its own line) before each reply.
    expect(lines.map((line) => line.type)).toEqual([
      "system",
      "assistant",
      "assistant",
      "assistant",
      "user",
      "assistant",
      "assistant",
      "result",
    ]);
    const last = lines.at(-1)!;
    expect(last).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
      num_turns: 2,
      terminal_reason: "completed",
    });
    expect(last.result).toContain("Summary of notes.md");
    // R-V1: the end of a run names the command that writes and opens its HTML report.
    expect(result.stderr).toContain(`report: forkloop report ${last.session_id} --open`);
    expect((last.usage as { cache_read_input_tokens: number }).cache_read_input_tokens).toBeGreaterThan(0);
    expect(last.total_cost_usd).toBeGreaterThan(0);
    // Honest about the simulator: exactly one notice line.
    expect(result.stderr.match(/replies come from the built-in simulator, not a real model/g)).toHaveLength(
      1,
    );
    sessionId = String(last.session_id);
  });

  it("sessions list / show and replay read the saved transcript (R-L5 transitions turn by turn)", async () => {
    const list = await runCli(["sessions", "list"], { cwd: dir });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(sessionId);
    expect(list.stdout).toContain("completed");
    const show = await runCli(["sessions", "show", sessionId], { cwd: dir });
    expect(show.stdout).toContain("user: Summarize notes.md");
    expect(show.stdout).toContain("tool_use Read");
    const replay = await runCli(["replay", sessionId], { cwd: dir });
    expect(replay.code).toBe(0);
    expect(replay.stdout).toMatch(
      /turn 1 ← start[\s\S]*tool_use Read[\s\S]*turn 2 ← next_turn[\s\S]*terminal: completed after 2 turns/,
    );
    const json = await runCli(["replay", sessionId, "--json"], { cwd: dir });
    expect(
      parseLines(json.stdout).map((line) => (line.type === "transition" ? line.transition : line.reason)),
    ).toEqual([null, "next_turn", "completed"]);
  });

  it("--resume continues the session with the new prompt", async () => {
    const result = await runCli(
      ["run", "--resume", sessionId, "--output-format", "json", "Now summarize notes.md again"],
      {
        cwd: dir,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(parseLines(result.stdout)[0]).toMatchObject({ session_id: sessionId, subtype: "success" });
    const show = await runCli(["sessions", "show", sessionId], { cwd: dir });
    expect(show.stdout).toMatch(/Summarize notes\.md[\s\S]*Now summarize notes\.md again/);
  });

  it("text output prints the final answer; the prompt may come from stdin", async () => {
    const result = await runCli(["run"], { cwd: dir, stdin: "Summarize notes.md" });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Summary of notes\.md/);
  });

  it("R-L19: --max-turns 1 → result error_max_turns and exit code 3", async () => {
    const result = await runCli(
      ["run", "Summarize notes.md", "--max-turns", "1", "--output-format", "json"],
      { cwd: dir },
    );
    expect(result.code).toBe(3);
    expect(parseLines(result.stdout)[0]).toMatchObject({
      subtype: "error_max_turns",
      is_error: true,
      terminal_reason: "max_turns",
    });
  });

  it("R-L6, R-K2: a model that keeps failing → Claude Code's api_error result (success with is_error) and exit code 4", async () => {
    const result = await runCli(["run", "hello", "--output-format", "json"], {
      cwd: dir,
      env: { FORKLOOP_SIM_FAULTS: "400@1+" },
    });
    expect(result.code, result.stderr).toBe(4);
    expect(parseLines(result.stdout)[0]).toMatchObject({
      subtype: "success",
      is_error: true,
      api_error_status: 400,
      terminal_reason: "api_error",
    });
  });

  it("R-L16: the first Ctrl+C interrupts cleanly (exit 130, terminal recorded), the transcript stays loadable", async () => {
    const run = startCli(["run", "Summarize notes.md", "--output-format", "stream-json"], {
      cwd: dir,
      env: { FORKLOOP_SIM_LATENCY: "realistic" },
    });
    await waitForOutput(run.child, run.stdout, (text) => text.includes('"subtype":"init"'));
    run.child.kill("SIGINT");
    const result = await run.exited;
    expect(result.code).toBe(130);
    const last = parseLines(result.stdout).at(-1)!;
    expect(String(last.terminal_reason)).toMatch(/^aborted_/);
    const replay = await runCli(["replay", String(last.session_id)], { cwd: dir });
    expect(replay.stdout).toMatch(/terminal: aborted_/);
  });

  it("R-P1: a headless run denies a write it cannot ask about (reported in permission_denials); --allowed-tools allows it", async () => {
    const scenario = join(dir, "write-scenario.json");
    await writeFile(
      scenario,
      JSON.stringify({
        rules: [
          {
            match: { turn: 0 },
            reply: {
              content: [{ type: "tool_use", name: "Write", input: { file_path: "out.txt", content: "hi" } }],
            },
          },
        ],
        fallback: { content: [{ type: "text", text: "finished (scripted by the simulator)" }] },
      }),
    );
    const sim = await startSimInProcess(dir, ["--scenario", scenario]);
    try {
      const denied = await runCli(["run", "write it", "--output-format", "json"], { cwd: dir, env: sim.env });
      expect(denied.code, denied.stderr).toBe(0);
      const result = parseLines(denied.stdout)[0]!;
      expect(result.permission_denials).toEqual([
        {
          tool_name: "Write",
          tool_use_id: expect.any(String),
          tool_input: expect.objectContaining({ content: "hi" }),
        },
      ]);
      await expect(access(join(dir, "out.txt"))).rejects.toThrow();
      const allowed = await runCli(
        ["run", "write it", "--output-format", "json", "--allowed-tools", "Write"],
        {
          cwd: dir,
          env: sim.env,
        },
      );
      expect(parseLines(allowed.stdout)[0]?.permission_denials).toEqual([]);
      await access(join(dir, "out.txt"));
    } finally {
      await sim.stop();
    }
  });

  it("--include-partial-messages adds raw stream events, which validate too", async () => {
    const result = await runCli(
      ["run", "Summarize notes.md", "--output-format", "stream-json", "--include-partial-messages"],
      { cwd: dir },
    );
    expect(result.code, result.stderr).toBe(0);
    const lines = parseLines(result.stdout);
    for (const line of lines)
      expect(streamJsonLineSchema.safeParse(line).success, JSON.stringify(line)).toBe(true);
    const events = lines
      .filter((line) => line.type === "stream_event")
      .map((line) => (line.event as { type: string }).type);
    expect(events).toContain("message_start");
    expect(events).toContain("content_block_delta");
    expect(events).toContain("message_stop");
  });

  it("R-L14: --budget +2k keeps the turn going with budget nudges (token_budget_continuation in the replay)", async () => {
    const result = await runCli(["run", "Summarize notes.md", "--budget", "+2k", "--output-format", "json"], {
      cwd: dir,
    });
    expect(result.code, result.stderr).toBe(0);
    const sessionId = String(parseLines(result.stdout)[0]?.session_id);
    const replay = await runCli(["replay", sessionId], { cwd: dir });
    expect(replay.stdout).toContain("← token_budget_continuation");
    expect(replay.stdout).toMatch(/user \(meta\): .*Token budget/);
  });

  it("settings hooks run in the loop: a PreToolUse hook that stops → hook_stopped and exit code 5; the result is Claude Code's (success, is_error false, empty)", async () => {
    const project = await mkdtemp(join(dir, "hooked-"));
    await writeFile(join(project, "notes.md"), "# Notes\n");
    await mkdir(join(project, ".forkloop"));
    await writeFile(
      join(project, ".forkloop", "settings.json"),
      JSON.stringify({
        hooks: {
          PreToolUse: [
            {
              matcher: "Read",
              hooks: [
                { type: "command", command: `echo '{"continue": false, "stopReason": "reads are frozen"}'` },
              ],
            },
          ],
        },
      }),
    );
    const result = await runCli(["run", "Summarize notes.md", "--output-format", "json"], { cwd: project });
    expect(result.code, result.stderr).toBe(5);
    expect(parseLines(result.stdout)[0]).toMatchObject({
      subtype: "success",
      is_error: false,
      result: "",
      terminal_reason: "hook_stopped",
    });
  });

  it("R-F1: the main agent's Agent tool forks a sub-agent into the worker pool; the parent gets one tool_result", async () => {
    const scenario = join(dir, "agent-scenario.json");
    await writeFile(
      scenario,
      JSON.stringify({
        rules: [
          {
            match: { querySource: "agent:general-purpose" },
            reply: { content: [{ type: "text", text: "sub-agent report: 42 (scripted)" }] },
          },
          {
            match: { turn: 0, querySource: "sdk" },
            reply: {
              content: [
                {
                  type: "tool_use",
                  name: "Agent",
                  input: { description: "count things", prompt: "Count them." },
                },
              ],
            },
          },
        ],
        fallback: { content: [{ type: "text", text: "parent done (scripted)" }] },
      }),
    );
    const sim = await startSimInProcess(dir, ["--scenario", scenario]);
    try {
      const result = await runCli(["run", "delegate", "--output-format", "stream-json"], {
        cwd: dir,
        env: sim.env,
      });
      expect(result.code, result.stderr).toBe(0);
      const lines = parseLines(result.stdout);
      expect(lines[0]?.tools).toContain("Agent");
      // The sub-agent's own messages (its task first, as Claude Code's) carry parent_tool_use_id.
      const toolResults = lines.filter((line) => line.type === "user" && line.parent_tool_use_id == null);
      expect(toolResults).toHaveLength(1);
      expect(lines.filter((line) => line.type === "user" && line.parent_tool_use_id != null)).toHaveLength(1);
      expect(JSON.stringify(toolResults[0])).toContain("sub-agent report: 42");
      expect(lines.at(-1)).toMatchObject({ subtype: "success", result: "parent done (scripted)" });
    } finally {
      await sim.stop();
    }
  });

  it("a retried API error shows as a system/api_retry line and the run still succeeds", async () => {
    const result = await runCli(["run", "Summarize notes.md", "--output-format", "stream-json"], {
      cwd: dir,
      env: { FORKLOOP_SIM_FAULTS: "529@1" },
    });
    expect(result.code, result.stderr).toBe(0);
    const lines = parseLines(result.stdout);
    for (const line of lines)
      expect(streamJsonLineSchema.safeParse(line).success, JSON.stringify(line)).toBe(true);
    expect(lines.find((line) => line.subtype === "api_retry")).toMatchObject({ attempt: 1 });
    expect(lines.at(-1)).toMatchObject({ subtype: "success" });
  });
});
