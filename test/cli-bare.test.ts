import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCliInProcess } from "@forkloop/cli/testing";
import { describe, expect, it } from "vitest";
import { useSimProject } from "./support/cli-sim-project.js";

// R-X3: `forkloop -p --bare` as Claude Code's minimal mode — no memory files in the system
// prompt, no settings hooks, the tools Bash, Edit and Read — against the simulator over HTTP,
// with a real hook process as the control.
const project = useSimProject("bare", async (dir, home) => {
  await writeFile(join(dir, "CLAUDE.md"), "The codename is GREY-OWL-3.\n");
  await mkdir(join(home, ".claude"));
  await mkdir(join(home, "hook-runs"));
  // Each run of the hook leaves one file (its input) in hook-runs/.
  const command = `cat > "${join(home, "hook-runs")}/$(date +%s%N)-$$.json"`;
  await writeFile(
    join(home, ".claude", "settings.json"),
    JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command }] }] } }),
  );
});

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

describe("R-X3: forkloop -p --bare", () => {
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
});
