import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { CLI_PATH, cliEnv, runCliInProcess, type SimHandle, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// R-X1: `forkloop run` takes `claude -p`'s habits, through the BUILT binary.
const run = promisify(execFile);

let dir: string;
let shared: string;
let sim: SimHandle;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-parity-"));
  await writeFile(join(dir, "notes.md"), "# Notes\nwire format\n");
  shared = await mkdtemp(join(tmpdir(), "forkloop-parity-shared-"));
  await writeFile(join(shared, "other.txt"), "other alpha beta\n");
  sim = await startSimInProcess(dir);
}, 60_000);
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
  await rm(shared, { recursive: true, force: true });
});

/** The main loop's requests the simulator received since `from` (its request log grows). */
async function mainRequests(from: number) {
  return (await sim.requests()).slice(from).filter((record) => record.querySource === "sdk");
}
const lastLine = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");

describe("R-X1: claude -p parity", () => {
  it("stdin piped through a shell is appended to the prompt argument (cat log | forkloop run …)", async () => {
    const before = (await sim.requests()).length;
    const { stdout } = await run(
      "sh",
      [
        "-c",
        `printf 'ERROR disk full on /var\\n' | "${process.execPath}" "${CLI_PATH}" run "Explain this log"`,
      ],
      { cwd: dir, env: cliEnv(sim.env, dir) },
    );
    expect(stdout).not.toBe("");
    const [first] = await mainRequests(before);
    const messages = JSON.parse(first?.rawBody ?? "{}").messages as { content: unknown }[];
    const sent = JSON.stringify(messages[0]?.content);
    expect(sent).toContain("Explain this log");
    expect(sent).toContain("ERROR disk full on /var");
    expect(sent.indexOf("Explain this log")).toBeLessThan(sent.indexOf("ERROR disk full"));
  });

  it('model aliases resolve through the catalog: --model opus, sonnet[1m], and a settings file\'s "model": "haiku"', async () => {
    const before = (await sim.requests()).length;
    const opus = await runCliInProcess(["run", "count to 2", "--model", "opus", "--output-format", "json"], {
      cwd: dir,
      env: sim.env,
    });
    expect(opus.code, opus.stderr).toBe(0);
    const sonnet = await runCliInProcess(["run", "count to 2", "--model", "sonnet[1m]"], {
      cwd: dir,
      env: sim.env,
    });
    expect(sonnet.code, sonnet.stderr).toBe(0);
    const project = join(dir, "with-settings");
    await mkdir(join(project, ".claude"), { recursive: true });
    await writeFile(join(project, ".claude", "settings.json"), JSON.stringify({ model: "haiku" }));
    const haiku = await runCliInProcess(["run", "count to 2"], { cwd: project, env: sim.env });
    expect(haiku.code, haiku.stderr).toBe(0);
    const models = (await mainRequests(before)).map((record) => JSON.parse(record.rawBody).model);
    expect(new Set(models)).toEqual(new Set(["claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"]));
    expect(Object.keys(JSON.parse(opus.stdout).modelUsage)).toEqual(["claude-opus-5-5"]);
  });

  it("forkloop -p / --print runs headless like `claude -p`, flags before or after; -c continues the latest session", async () => {
    const printed = await runCliInProcess(["-p", "Summarize notes.md", "--output-format", "json"], {
      cwd: dir,
    });
    expect(printed.code, printed.stderr).toBe(0);
    const sessionId = JSON.parse(printed.stdout).session_id;
    const flagsFirst = await runCliInProcess(["--output-format", "json", "--print", "count to 2"], {
      cwd: dir,
    });
    expect(flagsFirst.code, flagsFirst.stderr).toBe(0);
    const latest = JSON.parse(flagsFirst.stdout).session_id;
    expect(latest).not.toBe(sessionId);
    const continued = await runCliInProcess(["run", "-c", "count to 3", "--output-format", "json"], {
      cwd: dir,
    });
    expect(continued.code, continued.stderr).toBe(0);
    expect(JSON.parse(continued.stdout).session_id).toBe(latest);
  });

  it("R-X1: --continue with no session starts a new one, as in Claude Code, saying where it looked", async () => {
    const empty = await mkdtemp(join(tmpdir(), "forkloop-parity-empty-"));
    try {
      const result = await runCliInProcess(["run", "--continue", "hi", "--output-format", "json"], {
        cwd: empty,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).num_turns).toBe(1);
      expect(result.stderr).toMatch(/--continue: no session to continue in .+; starting a new one/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it("--max-budget-usd stops the run at the budget: error_max_budget_usd, Claude Code's sentence, exit 10", async () => {
    const json = await runCliInProcess(
      ["run", "Summarize notes.md", "--max-budget-usd", "0.000001", "--output-format", "json"],
      {
        cwd: dir,
      },
    );
    expect(json.code).toBe(10);
    expect(JSON.parse(json.stdout)).toMatchObject({ subtype: "error_max_budget_usd", is_error: true });
    const text = await runCliInProcess(["run", "Summarize notes.md", "--max-budget-usd", "0.000001"], {
      cwd: dir,
    });
    expect(text.code).toBe(10);
    // Claude Code's line on stdout, where it prints it; how to continue on stderr.
    expect(text.stdout).toMatch(/^Error: Exceeded USD budget \(0\.000001\)$/m);
    expect(text.stderr).toMatch(/^The session is saved: .*higher --max-budget-usd/m);
  });

  it("text-mode errors are Claude Code's sentences with the fix: max turns (exit 3); a 401 is bad input (R-R9: exit 2, forkloop's documented code where Claude Code exits 1)", async () => {
    const turns = await runCliInProcess(["run", "Summarize notes.md", "--max-turns", "1"], { cwd: dir });
    expect(turns.code).toBe(3);
    expect(turns.stdout).toBe("Error: Reached max turns (1)\n");
    expect(turns.stderr).toMatch(
      /^The session is saved: continue it with `forkloop run --resume [0-9a-f-]{36} "…"`, or raise --max-turns\.$/m,
    );
    const denied = await runCliInProcess(["run", "Summarize notes.md"], {
      cwd: dir,
      env: { FORKLOOP_SIM_FAULTS: "401@1" },
    });
    expect(denied.code).toBe(2);
    expect(denied.stderr).toMatch(
      /^API Error: the built-in simulator refused the API key \(401: .+\)\. Set ANTHROPIC_API_KEY to a valid key; then continue the session with `forkloop run --resume [0-9a-f-]{36} "…"`\.$/m,
    );
    expect(denied.stderr).not.toMatch(/forkloop run: (max_turns|model_error)/);
  });

  it("--add-dir lets the file tools read another directory; a missing one is exit 2 before any request", async () => {
    const prompt = `Summarize ${join(shared, "other.txt")}`;
    const outside = await runCliInProcess(["run", prompt], { cwd: dir });
    expect(outside.stdout).toContain("outside the workspace");
    const added = await runCliInProcess(["run", prompt, "--add-dir", shared], { cwd: dir });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain("Most frequent words: alpha");
    const before = (await sim.requests()).length;
    const missing = await runCliInProcess(["run", prompt, "--add-dir", join(dir, "nope")], {
      cwd: dir,
      env: sim.env,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--add-dir ${join(dir, "nope")}: no such directory`);
    expect((await sim.requests()).length).toBe(before);
  });

  it("--system-prompt replaces the system prompt (--append-system-prompt adds to it); --dangerously-skip-permissions is bypassPermissions; --allowedTools is accepted", async () => {
    const before = (await sim.requests()).length;
    const result = await runCliInProcess(
      [
        "run",
        "count to 2",
        "--system-prompt",
        "You are the release checker.",
        "--append-system-prompt",
        "Answer in one line.",
        "--dangerously-skip-permissions",
        "--allowedTools",
        "Read",
        "--output-format",
        "stream-json",
      ],
      { cwd: dir, env: sim.env },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout.split("\n")[0] ?? "{}")).toMatchObject({
      subtype: "init",
      permissionMode: "bypassPermissions",
    });
    const [request] = await mainRequests(before);
    const system = JSON.stringify(JSON.parse(request?.rawBody ?? "{}").system);
    expect(system).toContain("You are the release checker.\\n\\nAnswer in one line.");
    const preset = await runCliInProcess(
      ["run", "count to 2", "--append-system-prompt", "Answer in one line."],
      {
        cwd: dir,
        env: sim.env,
      },
    );
    expect(preset.code).toBe(0);
    const presetSystem = JSON.stringify(
      JSON.parse((await mainRequests(before)).at(-1)?.rawBody ?? "{}").system,
    );
    expect(presetSystem.length).toBeGreaterThan(system.length);
  });

  it("--input-format stream-json: one turn per stdin line in one session; a bad line is exit 2 naming it", async () => {
    const user = (content: string) => JSON.stringify({ type: "user", message: { role: "user", content } });
    const result = await runCliInProcess(
      ["run", "--input-format", "stream-json", "--output-format", "stream-json"],
      {
        cwd: dir,
        stdin: `${user("Summarize notes.md")}\n${user("count to 3")}\n`,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const results = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .filter((line) => line.type === "result");
    expect(results).toHaveLength(2);
    expect(results[0].session_id).toBe(results[1].session_id);
    const bad = await runCliInProcess(
      ["run", "--input-format", "stream-json", "--output-format", "stream-json"],
      {
        cwd: dir,
        stdin: `${user("count to 2")}\n{"type":"user","message":{"role":"user"}}\n`,
      },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/stdin line 2: message\.content: .+e\.g\. \{"type":"user"/);
    expect(lastLine(bad.stdout)).toMatchObject({ type: "result", subtype: "success" });
  });

  it("--settings takes a file or JSON, read last (it wins over the project's files); a bad one is exit 2 naming it", async () => {
    const before = (await sim.requests()).length;
    const project = join(dir, "flag-settings");
    await mkdir(join(project, ".claude"), { recursive: true });
    await writeFile(join(project, ".claude", "settings.json"), JSON.stringify({ model: "haiku" }));
    const json = await runCliInProcess(["run", "count to 2", "--settings", '{"model":"opus"}'], {
      cwd: project,
      env: sim.env,
    });
    expect(json.code, json.stderr).toBe(0);
    await writeFile(join(dir, "extra-settings.json"), JSON.stringify({ model: "sonnet" }));
    const file = await runCliInProcess(["run", "count to 2", "--settings", "../extra-settings.json"], {
      cwd: project,
      env: sim.env,
    });
    expect(file.code, file.stderr).toBe(0);
    // flag-settings/.claude/settings.json says haiku; the flag's settings win.
    const models = (await mainRequests(before)).map((record) => JSON.parse(record.rawBody).model);
    expect(models).toEqual(["claude-opus-5-5", "claude-sonnet-5-5"]);
    const badJson = await runCliInProcess(["run", "hi", "--settings", "{model:"], { cwd: dir });
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toContain("--settings: not valid JSON");
    const missing = await runCliInProcess(["run", "hi", "--settings", "nope.json"], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`settings ${join(dir, "nope.json")}: cannot read it (no such file)`);
    const badKey = await runCliInProcess(["run", "hi", "--settings", '{"permissions":{"allow":"Bash"}}'], {
      cwd: dir,
    });
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toMatch(/the settings option: permissions\.allow: .+Fix: /);
    expect((await mainRequests(before)).length).toBe(2);
  });

  it("flags that only mean something together are exit 2 with the fix", async () => {
    const partial = await runCliInProcess(["run", "hi", "--include-partial-messages"], { cwd: dir });
    expect(partial.code).toBe(2);
    expect(partial.stderr).toContain(
      "--include-partial-messages only applies to --output-format stream-json",
    );
    const input = await runCliInProcess(["run", "--input-format", "stream-json"], { cwd: dir });
    expect(input.code).toBe(2);
    expect(input.stderr).toContain("--input-format stream-json needs --output-format stream-json");
    const both = await runCliInProcess(["run", "hi", "-c", "--resume", "abc"], { cwd: dir });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give either --resume SESSION or --continue");
    const modes = await runCliInProcess(
      ["run", "hi", "--dangerously-skip-permissions", "--permission-mode", "plan"],
      {
        cwd: dir,
      },
    );
    expect(modes.code).toBe(2);
    expect(modes.stderr).toContain("contradicts --permission-mode plan");
  });
});
