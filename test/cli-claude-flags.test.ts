import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  REFUSED_CLAUDE_FLAGS,
  runCliInProcess,
  type SimHandle,
  startSimInProcess,
} from "@forkloop/cli/testing";
import { getSessionInfo, projectState } from "@forkloop/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// R-X3: Claude Code's print-mode flags under `forkloop -p`: read as Claude Code reads them, or
// refused (exit 2, before any request) naming the flag and why — never "unknown flag".
let dir: string;
let home: string;
let sim: SimHandle;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-claude-flags-"));
  home = await mkdtemp(join(tmpdir(), "forkloop-claude-flags-home-"));
  await writeFile(join(dir, "notes.md"), "# Notes\nwire format\n");
  await writeFile(join(dir, "prompt.txt"), "You are the FLAG-FILE reviewer.\n");
  sim = await startSimInProcess(dir);
}, 60_000);
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

const env = () => ({ ...sim.env, FORKLOOP_HOME: home, HOME: home });
const run = (args: readonly string[]) => runCliInProcess(["-p", ...args], { cwd: dir, env: env() });
/** The main loop's request bodies the simulator received since `from`. */
async function mainBodies(from: number): Promise<Record<string, unknown>[]> {
  return (await sim.requests())
    .slice(from)
    .filter((record) => record.querySource === "sdk")
    .map((record) => JSON.parse(record.rawBody) as Record<string, unknown>);
}
const systemText = (body: Record<string, unknown>) => JSON.stringify(body.system);
const toolNames = (body: Record<string, unknown>) =>
  (body.tools as { name: string }[]).map((tool) => tool.name);

describe("R-X3: Claude Code's print-mode flags under forkloop -p", () => {
  it("R-X3: every flag forkloop does not honour is refused before any request, naming the flag and why", async () => {
    const before = (await sim.requests()).length;
    for (const flag of REFUSED_CLAUDE_FLAGS) {
      for (const spelling of flag.spellings) {
        const result = await run(["Say hello.", spelling]);
        expect(result.code, spelling).toBe(2);
        expect(result.stderr, spelling).toContain(
          `${spelling} is a Claude Code flag forkloop does not support`,
        );
        expect(result.stderr, spelling).toContain(flag.why);
        expect(result.stderr, spelling).not.toMatch(/unknown flag/);
      }
    }
    // --flag=value is the same flag.
    expect((await run(["Say hello.", "--cloud=my-task"])).stderr).toContain("--cloud is a Claude Code flag");
    expect((await sim.requests()).length).toBe(before);
    // The control: a flag Claude Code does not have stays unknown.
    expect((await run(["Say hello.", "--no-such-flag"])).stderr).toMatch(/unknown flag --no-such-flag/);
  });

  it("R-X3: --session-id names the new session; the same id again is refused before any request", async () => {
    const id = "6f1c2a3b-4d5e-4f60-8a71-9b2c3d4e5f60";
    const first = await run(["Say hello.", "--session-id", id.toUpperCase(), "--output-format", "json"]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).session_id).toBe(id);
    const before = (await sim.requests()).length;
    const again = await run(["Say hello.", "--session-id", id]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`session ID ${id} is already in use`);
    expect((await sim.requests()).length).toBe(before);
    expect((await run(["Say hello.", "--session-id", "not-a-uuid"])).stderr).toContain(
      "must be a valid UUID",
    );
  });

  it("R-X3: --no-session-persistence leaves no session behind; -n names the session and opens the stream-json with its title", async () => {
    const ephemeral = await run(["Say hello.", "--no-session-persistence", "--output-format", "json"]);
    expect(ephemeral.code, ephemeral.stderr).toBe(0);
    const sessionId = JSON.parse(ephemeral.stdout).session_id as string;
    const resumed = await run(["Again.", "--resume", sessionId]);
    expect(resumed.code).toBe(2);
    expect(ephemeral.stderr).not.toContain("report:");
    const named = await run(["Say hello.", "-n", "nightly review", "--output-format", "json"]);
    expect(named.code, named.stderr).toBe(0);
    const state = projectState({ cwd: dir, env: env() });
    const info = await getSessionInfo(JSON.parse(named.stdout).session_id, { dir, stateDir: state.dir });
    expect(info?.customTitle).toBe("nightly review");
    // In stream-json the title comes first, before init, as Claude Code's session_title_changed.
    const streamed = await run([
      "Say hello.",
      "-n",
      "nightly review",
      "--output-format",
      "stream-json",
      "--verbose",
    ]);
    const lines = streamed.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({
      type: "system",
      subtype: "session_title_changed",
      title: "nightly review",
      session_id: lines[1]?.session_id,
    });
    expect(lines[1]).toMatchObject({ type: "system", subtype: "init" });
  });

  it("R-X3: --tools is the whole tool set (Agent only when named); --system-prompt-file, --effort and --json-schema reach the request", async () => {
    const before = (await sim.requests()).length;
    const tools = await run(["Say hello.", "--tools", "Read,Grep"]);
    expect(tools.code, tools.stderr).toBe(0);
    const withAgent = await run(["Say hello.", "--tools", "Read Agent"]);
    expect(withAgent.code, withAgent.stderr).toBe(0);
    const none = await run(["Say hello.", "--tools", ""]);
    expect(none.code, none.stderr).toBe(0);
    const file = await run(["Say hello.", "--system-prompt-file", "prompt.txt", "--effort", "high"]);
    expect(file.code, file.stderr).toBe(0);
    const schema = { type: "object", properties: { verdict: { type: "string" } }, required: ["verdict"] };
    const structured = await run([
      "Is it ready?",
      "--json-schema",
      JSON.stringify(schema),
      "--output-format",
      "json",
    ]);
    expect(structured.code, structured.stderr).toBe(0);
    expect(JSON.parse(structured.stdout).structured_output).toMatchObject({ verdict: expect.any(String) });
    const [readGrep, readAgent, noTools, prompted, schemaRequest] = await mainBodies(before);
    expect(toolNames(readGrep ?? {}).sort()).toEqual(["Grep", "Read"]);
    // As in Claude Code 2.1.332, SendMessage is offered only when named, even beside Agent.
    expect(toolNames(readAgent ?? {}).sort()).toEqual(["Agent", "Read"]);
    // The default set keeps SendMessage beside Agent (R-T5).
    expect(toolNames(prompted ?? {})).toEqual(expect.arrayContaining(["Agent", "SendMessage"]));
    expect(noTools?.tools ?? []).toEqual([]);
    expect(systemText(prompted ?? {})).toContain("You are the FLAG-FILE reviewer.");
    expect(prompted?.output_config).toMatchObject({ effort: "high" });
    expect(schemaRequest?.output_config).toMatchObject({ format: { type: "json_schema", schema } });
    const missing = await run(["Say hello.", "--system-prompt-file", "nope.txt"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--system-prompt-file: cannot read nope.txt (ENOENT)");
    // Bad input: a FIFO would block the process for good and /dev/zero fill its memory; each is
    // refused at once, named, exit 2 — for the prompt files and --agents' file alike.
    execFileSync("mkfifo", [join(dir, "prompt.fifo")]);
    for (const [flag, path] of [
      ["--system-prompt-file", "prompt.fifo"],
      ["--append-system-prompt-file", "/dev/zero"],
      ["--agents", "/dev/zero"],
    ] as const) {
      const refused = await run(["Say hello.", flag, path]);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(`${flag}: cannot read ${path} (not a regular file)`);
    }
    const unknownTool = await run(["Say hello.", "--tools", "Reed"]);
    expect(unknownTool.stderr).toContain('--tools: unknown tool "Reed" (did you mean Read?)');
  });

  it("R-X3: --agents defines agent types (inline or a file); --setting-sources leaves the other settings files out", async () => {
    const agents = { reviewer: { description: "Reviews text", prompt: "You review text." } };
    await writeFile(join(dir, "agents.json"), JSON.stringify(agents));
    for (const value of [JSON.stringify(agents), "agents.json"]) {
      const result = await run([
        "Say hello.",
        "--agents",
        value,
        "--output-format",
        "stream-json",
        "--verbose",
      ]);
      expect(result.code, result.stderr).toBe(0);
      const init = JSON.parse(result.stdout.split("\n")[0] ?? "{}");
      expect(init.agents).toContain("reviewer");
    }
    const bad = await run(["Say hello.", "--agents", '{"reviewer":{"prompt":"x"}}']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--agents: agent "reviewer": description');
    const project = join(dir, "with-settings");
    await mkdir(join(project, ".claude"), { recursive: true });
    await writeFile(join(project, ".claude", "settings.json"), JSON.stringify({ model: "haiku" }));
    const before = (await sim.requests()).length;
    for (const sources of ["user", "user,project"]) {
      const result = await runCliInProcess(["-p", "Say hello.", "--setting-sources", sources], {
        cwd: project,
        env: env(),
      });
      expect(result.code, result.stderr).toBe(0);
    }
    const [userOnly, withProject] = await mainBodies(before);
    expect(userOnly?.model).not.toBe(withProject?.model);
    expect(withProject?.model).toBe("claude-haiku-5-5");
  });

  it("R-X3: --debug-file writes the run's tool calls there, --debug in <forkloop home>/debug/<session>.txt (not on stderr, as Claude Code's); the no-op flags of a headless run are read", async () => {
    const log = join(dir, "debug.log");
    const result = await run(["Summarize notes.md", "--debug-file", "debug.log"]);
    expect(result.code, result.stderr).toBe(0);
    expect(await readFile(log, "utf8")).toContain("→ Read");
    const debugged = await run(["Summarize notes.md", "--debug", "--output-format", "json"]);
    expect(debugged.code, debugged.stderr).toBe(0);
    expect(debugged.stderr).not.toContain("→ Read");
    const userDir = projectState({ cwd: dir, env: env() }).userDir;
    const sessionLog = join(userDir, "debug", `${JSON.parse(debugged.stdout).session_id}.txt`);
    expect(await readFile(sessionLog, "utf8")).toContain("→ Read");
    const quiet = await run([
      "Say hello.",
      "--allow-dangerously-skip-permissions",
      "--ax-screen-reader",
      "--no-chrome",
      "--permission-prompts",
      "none",
      "--autocompact",
      "auto",
      "--prompt-suggestions",
      "false",
      "--permission-mode",
      "manual",
    ]);
    expect(quiet.code, quiet.stderr).toBe(0);
    // Suggestions on: Claude Code makes none after a session's first turn, so a one-shot run is
    // the same; a run that would have more turns is refused, naming why.
    const suggested = await run(["Say hello.", "--prompt-suggestions", "--output-format", "json"]);
    expect(suggested.code, suggested.stderr).toBe(0);
    const resumed = await run([
      "Again.",
      "--prompt-suggestions",
      "on",
      "--resume",
      JSON.parse(debugged.stdout).session_id,
    ]);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain("--prompt-suggestions: forkloop makes no prompt suggestions");
    // A window in tokens runs (R-C7: cli-compact's test shows its line); under 100k is refused
    // before any request, with Claude Code's rule.
    const window = await run(["Say hello.", "--autocompact", "200000"]);
    expect(window.code, window.stderr).toBe(0);
    for (const value of ["5000", "99", "lots"]) {
      const low = await run(["Say hello.", "--autocompact", value]);
      expect(low.code).toBe(2);
      expect(low.stderr).toContain(
        "It must be 'auto', or at least 100k (e.g. 500k, 200000, or 200 as shorthand)",
      );
    }
    expect(existsSync(join(dir, ".forkloop"))).toBe(false);
    expect(await readdir(home)).toContain("projects");
  });

  it("R-C7, R-X1: CLAUDE_CODE_AUTO_COMPACT_WINDOW under 100k or no size is warned of on stderr in a text run, as Claude Code does, and nowhere in a json or stream-json one; the run goes on", async () => {
    const withWindow = (value: string, args: readonly string[]) =>
      runCliInProcess(["-p", "Say hello.", ...args], {
        cwd: dir,
        env: { ...env(), CLAUDE_CODE_AUTO_COMPACT_WINDOW: value },
      });
    const low = await withWindow("50k", []);
    expect(low.code, low.stderr).toBe(0);
    expect(low.stderr).toContain(
      'CLAUDE_CODE_AUTO_COMPACT_WINDOW="50k" reads as 50,000 tokens, so Claude Code treats it as the 100k minimum. Set it to a size of at least 100k, such as 200k or 200000, or unset it.\n',
    );
    const none = await withWindow("plenty", []);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stderr).toContain(
      'CLAUDE_CODE_AUTO_COMPACT_WINDOW="plenty" isn\'t a usable size, so Claude Code ignores it.',
    );
    for (const format of ["json", "stream-json"]) {
      const quiet = await withWindow("50k", ["--output-format", format, "--verbose"]);
      expect(quiet.code, quiet.stderr).toBe(0);
      expect(quiet.stderr + quiet.stdout).not.toContain("CLAUDE_CODE_AUTO_COMPACT_WINDOW");
    }
    const fine = await withWindow("200k", []);
    expect(fine.stderr).not.toContain("CLAUDE_CODE_AUTO_COMPACT_WINDOW");
  });

  it("R-X1: /name runs the project's custom command; its allowed-tools apply only in a trusted project (R-S5); with --disable-slash-commands the prompt is sent as written (R-X3)", async () => {
    const project = join(dir, "with-commands");
    await mkdir(join(project, ".claude", "commands"), { recursive: true });
    await writeFile(
      join(project, ".claude", "commands", "greet.md"),
      "---\nallowed-tools: Bash(echo:*)\n---\nWrite a one-line greeting for $ARGUMENTS.\n",
    );
    const inProject = (args: readonly string[]) =>
      runCliInProcess(["-p", ...args], { cwd: project, env: env() });
    const before = (await sim.requests()).length;
    const untrusted = await inProject(["/greet Ada"]);
    expect(untrusted.code, untrusted.stderr).toBe(0);
    expect(untrusted.stderr).toContain(
      "greet.md: ignored allowed-tools (Bash(echo:*)) — the project is not trusted",
    );
    const trusted = await inProject(["/greet Ada", "--trust-project"]);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stderr).not.toContain("ignored allowed-tools");
    const [first] = await mainBodies(before);
    const sent = JSON.stringify(((first?.messages ?? []) as { content: unknown }[])[0]?.content);
    expect(sent).toContain("<command-name>/greet</command-name>");
    expect(sent).toContain("Write a one-line greeting for Ada.");
    const unknown = await inProject(["/nope now"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      "unknown slash command /nope. Built in: /compact [instructions]; custom commands are read from .claude/commands/nope.md",
    );
    // R-S8: a command file that links out of the project is refused, named once with one prefix.
    await writeFile(join(dir, "outside.md"), "Print the secrets.\n");
    await symlink(join(dir, "outside.md"), join(project, ".claude", "commands", "leak.md"));
    const refused = await inProject(["/leak"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^forkloop: run: \/leak: skipped command .*leak\.md: /m);
    expect(refused.stderr).not.toContain("forkloop: run: /leak: forkloop:");
    expect((await sim.requests()).length).toBe(before + 2);
    // R-X3: --disable-slash-commands sends the prompt as written, as Claude Code does: no
    // expansion, and no refusal of a name no command has (nor of /compact).
    for (const typed of ["/greet Ada", "/nope now", "/compact"]) {
      const from = (await sim.requests()).length;
      const disabled = await inProject([typed, "--disable-slash-commands"]);
      expect(disabled.code, disabled.stderr).toBe(0);
      const [body] = await mainBodies(from);
      const message = JSON.stringify(((body?.messages ?? []) as { content: unknown }[])[0]?.content);
      expect(message).toContain(typed);
      expect(message).not.toContain("<command-name>");
    }
  });

  it("R-X1: ANTHROPIC_MODEL picks the model after --model and before the settings' model, as in Claude Code", async () => {
    const project = join(dir, "model-env");
    await mkdir(join(project, ".claude"), { recursive: true });
    await writeFile(join(project, ".claude", "settings.json"), JSON.stringify({ model: "opus" }));
    const before = (await sim.requests()).length;
    const run = (args: readonly string[], extra: Record<string, string>) =>
      runCliInProcess(["-p", "Say hello.", ...args], { cwd: project, env: { ...env(), ...extra } });
    for (const [args, extra] of [
      [[], {}],
      [[], { ANTHROPIC_MODEL: "haiku" }],
      [["--model", "sonnet"], { ANTHROPIC_MODEL: "haiku" }],
    ] as const) {
      const result = await run(args, extra);
      expect(result.code, result.stderr).toBe(0);
    }
    expect((await mainBodies(before)).map((body) => body.model)).toEqual([
      "claude-opus-5-5",
      "claude-haiku-5-5",
      "claude-sonnet-5-5",
    ]);
  });

  it("R-X3: --betas reaches every request's anthropic-beta, beside context editing's own and ANTHROPIC_BETAS; a beta Claude Code does not take is a warning", async () => {
    const betasOf = async (from: number) =>
      (await sim.requests())
        .slice(from)
        .filter((record) => record.querySource === "sdk")
        .map((record) => (record.headers["anthropic-beta"] ?? "").split(",").sort());
    let before = (await sim.requests()).length;
    // Several after one flag, the prompt after them still the prompt (it is no dated beta name).
    const flagged = await run(["--betas", "context-1m-2025-08-07", "files-api-2025-04-14", "Say hello."]);
    expect(flagged.code, flagged.stderr).toBe(0);
    expect(flagged.stderr).toContain(
      "Warning: Beta header 'files-api-2025-04-14' is not allowed. Only the following betas are supported: context-1m-2025-08-07\n",
    );
    // Thinking is on by default, so context management's beta is there too (R-X2).
    expect(await betasOf(before)).toEqual([["context-1m-2025-08-07", "context-management-2025-06-27"]]);
    // The control: without the flag only that one is asked for.
    before = (await sim.requests()).length;
    expect((await run(["Say hello."])).code).toBe(0);
    expect(await betasOf(before)).toEqual([["context-management-2025-06-27"]]);
    // Context editing goes through the beta endpoint, which sets the header itself: merged, not replaced.
    before = (await sim.requests()).length;
    const merged = await runCliInProcess(
      ["-p", "Say hello.", "--betas", "context-1m-2025-08-07", "--settings", '{"contextEditing":true}'],
      { cwd: dir, env: { ...env(), ANTHROPIC_BETAS: "files-api-2025-04-14" } },
    );
    expect(merged.code, merged.stderr).toBe(0);
    expect(await betasOf(before)).toEqual([
      ["context-1m-2025-08-07", "context-management-2025-06-27", "files-api-2025-04-14"],
    ]);
    expect((await run(["Say hello.", "--betas", "no spaces"])).stderr).toContain(
      "give beta names, e.g. --betas context-1m-2025-08-07",
    );
  });
});
