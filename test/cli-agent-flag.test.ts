import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCliInProcess } from "@forkloop/cli/testing";
import { describe, expect, it } from "vitest";
import { useSimProject } from "./support/cli-sim-project.js";

// R-X3: `forkloop -p --agent NAME` as Claude Code's — the main session runs as the agent type:
// its prompt in place of the main system prompt, its tools, its model — against the simulator.
const project = useSimProject("agent-flag", async (dir) => {
  await mkdir(join(dir, ".claude", "agents"), { recursive: true });
  await writeFile(
    join(dir, ".claude", "agents", "auditor.md"),
    "---\nname: auditor\ndescription: Audits\ntools: Read, Glob\n---\nYou audit. FILE-AGENT-PROMPT.\n",
  );
  await writeFile(
    join(dir, ".claude", "agents", "editor.md"),
    "---\nname: editor\ndescription: Edits\nisolation: worktree\n---\nYou edit. EDITOR-PROMPT.\n",
  );
});

async function run(args: readonly string[]) {
  const from = (await project.sim.requests()).length;
  const result = await runCliInProcess(["-p", "Review notes.", ...args], {
    cwd: project.dir,
    env: project.env(),
  });
  const main = (await project.sim.requests()).slice(from).find((record) => record.querySource === "sdk");
  const body = JSON.parse(main?.rawBody ?? "{}") as {
    model?: string;
    system?: unknown;
    tools?: { name: string }[];
  };
  return {
    result,
    requested: main !== undefined,
    model: body.model,
    system: JSON.stringify(body.system),
    tools: (body.tools ?? []).map((tool) => tool.name).sort(),
  };
}

describe("R-X3: forkloop -p --agent", () => {
  it("R-X3: --agent runs the main session as an --agents type: its prompt replaces the main one, its tools, its model", async () => {
    const agents = JSON.stringify({
      reviewer: {
        description: "Reviews",
        prompt: "You review. FLAG-AGENT-PROMPT.",
        tools: ["Read"],
        model: "haiku",
      },
    });
    const run1 = await run(["--agents", agents, "--agent", "reviewer"]);
    expect(run1.result.code, run1.result.stderr).toBe(0);
    expect(run1.system).toContain("FLAG-AGENT-PROMPT");
    expect(run1.system).not.toContain("You are forkloop");
    expect(run1.tools).toEqual(["Read"]);
    expect(run1.model).toMatch(/haiku/);
    // --model and --tools still win over the agent's.
    const run2 = await run([
      "--agents",
      agents,
      "--agent",
      "reviewer",
      "--model",
      "sonnet",
      "--tools",
      "Read,Grep",
    ]);
    expect(run2.model).toMatch(/sonnet/);
    expect(run2.tools).toEqual(["Grep", "Read"]);
  });

  it("R-X3: --agent finds the project's agent files; an unknown type is exit 2 naming the types, before any request", async () => {
    const file = await run(["--agent", "auditor"]);
    expect(file.result.code, file.result.stderr).toBe(0);
    expect(file.system).toContain("FILE-AGENT-PROMPT");
    expect(file.tools).toEqual(["Glob", "Read"]);
    const unknown = await run(["--agent", "nobody"]);
    expect(unknown.result.code).toBe(2);
    expect(unknown.result.stderr).toContain('--agent: no agent type "nobody"');
    expect(unknown.result.stderr).toContain("auditor");
    expect(unknown.requested).toBe(false);
  });

  it("R-B2, R-X3: --agent with a definition that asks isolation: worktree runs the main session in the project, and says once that the isolation is a sub-agent's (control: an unisolated type says nothing)", async () => {
    const isolated = await run(["--agent", "editor"]);
    expect(isolated.result.code, isolated.result.stderr).toBe(0);
    expect(isolated.system).toContain("EDITOR-PROMPT");
    expect(
      isolated.result.stderr.match(/isolation: "worktree" applies when it runs as a sub-agent/g),
    ).toHaveLength(1);
    expect(isolated.result.stderr).toContain("To isolate the session, add --worktree [NAME]");
    const plain = await run(["--agent", "auditor"]);
    expect(plain.result.stderr).not.toContain("isolation");
  });

  it("R-X3: --agent with --bare or --restricted, as Claude Code 2.1.332's (observed): the agent's tools replace bare's set (bare's set when it names none), and --restricted still takes Bash out of them", async () => {
    const agents = JSON.stringify({
      tooled: { description: "Tooled", prompt: "You check. TOOLED-PROMPT.", tools: ["Read", "Bash"] },
      plain: { description: "Plain", prompt: "You check. PLAIN-PROMPT." },
    });
    const bare = await run(["--bare", "--agents", agents, "--agent", "tooled"]);
    expect(bare.result.code, bare.result.stderr).toBe(0);
    expect(bare.tools).toEqual(["Bash", "Read"]);
    const barePlain = await run(["--bare", "--agents", agents, "--agent", "plain"]);
    expect(barePlain.tools).toEqual(["Bash", "Edit", "Read"]);
    const restricted = await run(["--restricted", "--agents", agents, "--agent", "tooled"]);
    expect(restricted.result.code, restricted.result.stderr).toBe(0);
    expect(restricted.system).toContain("TOOLED-PROMPT");
    expect(restricted.tools).toEqual(["Read"]);
  });
});
