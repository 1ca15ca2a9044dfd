import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCliInProcess } from "@forkloop/cli/testing";
import { describe, expect, it } from "vitest";
import { useSimProject } from "./support/cli-sim-project.js";

// R-X3: `forkloop -p --bare`, `--restricted` and `--safe-mode` as Claude Code's — --bare: no memory files in
// the system prompt, no settings hooks, the tools Bash, Edit and Read; --restricted: no settings
// files but --settings, no memory files, no Bash or WebFetch unless named, no bypass; --safe-mode:
// no customization (memory, hooks, skills, agent and command files) — against
// the simulator over HTTP, with a real hook process as the control.
const project = useSimProject("bare", async (dir, home) => {
  await writeFile(join(dir, "CLAUDE.md"), "The codename is GREY-OWL-3.\n");
  await mkdir(join(dir, ".claude", "agents"), { recursive: true });
  await writeFile(
    join(dir, ".claude", "agents", "reviewer.md"),
    "---\nname: reviewer\ndescription: Reviews code\n---\nYou review code.\n",
  );
  await mkdir(join(dir, ".claude", "skills", "greet"), { recursive: true });
  await writeFile(
    join(dir, ".claude", "skills", "greet", "SKILL.md"),
    "---\nname: greet\ndescription: Greets\n---\nSay hello.\n",
  );
  await mkdir(join(dir, ".claude", "commands"));
  await writeFile(join(dir, ".claude", "commands", "hello.md"), "Say hello to $ARGUMENTS.\n");
  await mkdir(join(home, ".claude"));
  await mkdir(join(home, "hook-runs"));
  await writeFile(join(home, ".claude", "settings.json"), hookedSettings(home));
});

/** Settings whose UserPromptSubmit hook leaves one file (its input) in hook-runs/ per run. */
function hookedSettings(home: string): string {
  const command = `cat > "${join(home, "hook-runs")}/$(date +%s%N)-$$.json"`;
  return JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command }] }] } });
}

/** One run: its exit, its main request's system text and tool names, whether the hook ran. */
async function run(args: readonly string[]) {
  const { sim } = project;
  const from = (await sim.requests()).length;
  const hookRuns = async () => (await readdir(join(project.home, "hook-runs"))).length;
  const runsBefore = await hookRuns();
  const result = await runCliInProcess(["-p", "What is the codename?", ...args], {
    cwd: project.dir,
    env: project.env(),
  });
  const main = (await sim.requests()).slice(from).find((record) => record.querySource === "sdk");
  const body = JSON.parse(main?.rawBody ?? "{}") as { system?: unknown; tools?: { name: string }[] };
  return {
    result,
    system: JSON.stringify(body.system),
    tools: (body.tools ?? []).map((tool) => tool.name).sort(),
    hookRan: (await hookRuns()) > runsBefore,
  };
}

describe("R-X3: forkloop -p --bare, --restricted and --safe-mode", () => {
  it("R-X3: --bare leaves CLAUDE.md out of the system prompt, runs no settings hook and offers Bash, Edit and Read", async () => {
    const bare = await run(["--bare"]);
    expect(bare.result.code, bare.result.stderr).toBe(0);
    expect(bare.system).not.toContain("GREY-OWL-3");
    expect(bare.hookRan).toBe(false);
    expect(bare.tools).toEqual(["Bash", "Edit", "Read"]);
    // The control: the same run without --bare reads CLAUDE.md and runs the hook.
    const full = await run([]);
    expect(full.result.code, full.result.stderr).toBe(0);
    expect(full.system).toContain("GREY-OWL-3");
    expect(full.hookRan).toBe(true);
    expect(full.tools.length).toBeGreaterThan(3);
  });

  it("R-X3: --tools names the tool set under --bare too", async () => {
    const named = await run(["--bare", "--tools", "Read,Grep"]);
    expect(named.result.code, named.result.stderr).toBe(0);
    expect(named.tools).toEqual(["Grep", "Read"]);
    expect(named.hookRan).toBe(false);
  });

  it("R-X3: --restricted reads no settings file (--settings still applies) and no CLAUDE.md, and offers no Bash or WebFetch unless --tools names them", async () => {
    const restricted = await run(["--restricted"]);
    expect(restricted.result.code, restricted.result.stderr).toBe(0);
    expect(restricted.system).not.toContain("GREY-OWL-3");
    expect(restricted.hookRan).toBe(false);
    expect(restricted.tools).toContain("Read");
    expect(restricted.tools).toContain("Write");
    expect(restricted.tools).not.toContain("Bash");
    expect(restricted.tools).not.toContain("WebFetch");
    // --settings is still read: its hook runs.
    const withSettings = await run(["--restricted", "--settings", hookedSettings(project.home)]);
    expect(withSettings.result.code, withSettings.result.stderr).toBe(0);
    expect(withSettings.hookRan).toBe(true);
    const named = await run(["--restricted", "--tools", "Bash,Read"]);
    expect(named.tools).toEqual(["Bash", "Read"]);
  });

  it("R-X3: --restricted with bypassPermissions is exit 2 naming the fix, before any request", async () => {
    const before = (await project.sim.requests()).length;
    for (const flags of [["--permission-mode", "bypassPermissions"], ["--dangerously-skip-permissions"]]) {
      const result = await run(["--restricted", ...flags]);
      expect(result.result.code).toBe(2);
      expect(result.result.stderr).toContain("bypassPermissions is not supported in restricted mode");
    }
    expect((await project.sim.requests()).length).toBe(before);
  });

  it("R-X3: --safe-mode turns every customization off — CLAUDE.md, settings hooks, skills, agent and command files — and keeps the tools", async () => {
    const init = (stdout: string) => JSON.parse(stdout.split("\n")[0] ?? "{}") as Record<string, unknown>;
    const stream = ["--output-format", "stream-json", "--verbose"];
    const safe = await run(["--safe-mode", ...stream]);
    expect(safe.result.code, safe.result.stderr).toBe(0);
    expect(safe.system).not.toContain("GREY-OWL-3");
    expect(safe.hookRan).toBe(false);
    expect(safe.tools).toContain("Bash");
    expect(init(safe.result.stdout)).toMatchObject({
      agents: ["general-purpose", "Explore", "Plan", "fork"],
      skills: [],
    });
    // The control: the project's agent and skill are there without it.
    const full = await run(stream);
    expect(init(full.result.stdout)).toMatchObject({
      agents: ["general-purpose", "Explore", "Plan", "fork", "reviewer"],
      skills: ["greet"],
    });
    const command = await runCliInProcess(["-p", "/hello Ada", "--safe-mode"], {
      cwd: project.dir,
      env: project.env(),
    });
    expect(command.code).toBe(2);
    expect(command.stderr).toContain(
      "--safe-mode: custom commands (.claude/commands, .forkloop/commands) are off",
    );
  });
});
