import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, withSim, writeScenario } from "@forkloop/cli/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/**
 * R-B2–R-B4 for sub-agents: an Agent call with `isolation: "worktree"` (Claude Code's field, in
 * the call or the agent's definition) works in its own worktree of the tree as it is (uncommitted
 * changes included); its change is merged into the tree once when it ends, an overlapping change
 * is reported to the parent and not applied, and no worktree outlives a success (nor the next
 * run of the session).
 */
let dir: string;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "forkloop-agent-isolation-")));
  git("init", "-q");
  await writeFile(join(dir, "a.txt"), "one\n");
  git("add", ".");
  git("commit", "-qm", "base");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function git(...args: string[]): string {
  return execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], {
    cwd: dir,
    encoding: "utf8",
  });
}

const worktrees = () => git("worktree", "list", "--porcelain").match(/^worktree /gm)?.length ?? 0;
const agentRefs = () => git("for-each-ref", "refs/forkloop/agent-bases").trim();

const bash = (command: string) => ({ type: "tool_use", name: "Bash", input: { command } });
const agentCall = (prompt: string, extra: Record<string, unknown> = {}) => ({
  type: "tool_use",
  name: "Agent",
  input: { description: prompt, prompt, ...extra },
});

/** The parent calls the given Agents in one turn; each sub-agent runs one Bash command, then reports. */
async function scenario(calls: readonly object[], commands: Record<string, string>): Promise<string> {
  return writeScenario(
    join(dir, "..", `${dir.split("/").at(-1)}-scenario.json`),
    [
      {
        match: { querySource: "sdk", lastToolResult: "/./" },
        reply: { content: [{ type: "text", text: "parent done" }] },
      },
      {
        match: { querySource: "sdk" },
        reply: { content: calls.length > 0 ? calls : [{ type: "text", text: "nothing to do" }] },
      },
      // A fork's first message holds its task (after placeholder results for the parent's calls).
      ...Object.entries(commands).map(([task, command]) => ({
        match: { lastUserText: task },
        reply: { content: [bash(command)] },
      })),
      { match: { lastToolResult: "/./" }, reply: { content: [{ type: "text", text: "sub-agent done" }] } },
    ],
    "(unscripted)",
  );
}

async function run(scenarioPath: string, args: readonly string[] = []) {
  return withSim(dir, ["--scenario", scenarioPath], async (sim) => {
    const result = await runCliInProcess(
      [
        "run",
        "Do the work.",
        "--output-format",
        "json",
        "--permission-mode",
        "acceptEdits",
        "--allowed-tools",
        "Bash",
        ...args,
      ],
      { cwd: dir, env: sim.env },
    );
    expect(result.code, result.stderr).toBe(0);
    const requests = (await sim.requests()).filter((r) => r.path === "/v1/messages");
    return { result: JSON.parse(result.stdout) as { session_id: string }, requests };
  });
}

/** The Agent tool results the parent's last request carried. */
function agentResults(requests: readonly { querySource: string | null; rawBody: string }[]): string[] {
  const last = requests.filter((r) => r.querySource === "sdk").at(-1);
  const body = JSON.parse(last?.rawBody ?? "{}") as {
    messages: { content: string | { type: string; content?: unknown; is_error?: boolean }[] }[];
  };
  const content = body.messages.at(-1)?.content;
  return Array.isArray(content)
    ? content
        .filter((block) => block.type === "tool_result")
        .map((block) => `${block.is_error === true ? "ERROR " : ""}${JSON.stringify(block.content)}`)
    : [];
}

describe("Agent isolation: worktree (R-B2, R-B3, R-B4)", { timeout: 90_000 }, () => {
  it("R-B2: an isolated sub-agent edits its own worktree of the tree as it is (uncommitted changes included); R-B3: its change is merged once when it ends and no worktree is left", async () => {
    // The parent's own uncommitted edit: the sub-agent must see it and keep it.
    await writeFile(join(dir, "a.txt"), "one\nparent\n");
    const path = await scenario([agentCall("append two", { isolation: "worktree" })], {
      "append two": `echo two >> a.txt && pwd && cat ${dir}/a.txt && cat a.txt`,
    });
    const { requests } = await run(path);
    const bashResult = JSON.stringify(
      requests.filter((r) => r.querySource?.startsWith("agent:")).map((r) => r.rawBody),
    );
    // It ran in a worktree under the session's state, not in the project; the project was untouched meanwhile.
    expect(bashResult).toMatch(/isolated-agents\/agent-[0-9a-f]+\/workspaces\//);
    // The project's a.txt (still the parent's), then the worktree's (the parent's edit, then two).
    expect(bashResult).toContain("one\\\\nparent\\\\none\\\\nparent\\\\ntwo");
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("one\nparent\ntwo\n");
    const [result] = agentResults(requests);
    expect(result).toContain("its change to a.txt is merged into");
    expect(result?.startsWith("ERROR")).toBe(false);
    expect(worktrees()).toBe(1);
    expect(agentRefs()).toBe("");
    // The user's index and HEAD are untouched: a.txt is still an uncommitted change.
    expect(git("status", "--porcelain", "--", "a.txt")).toBe(" M a.txt\n");
    expect(git("diff", "--cached", "--name-only")).toBe("");
  });

  it("R-B2, R-F3: a fork (subagent_type fork) with isolation: worktree continues the parent's conversation in its own worktree; its change is merged and `git worktree list` shows no worktree after it succeeds", async () => {
    const path = await scenario(
      [agentCall("fork append", { subagent_type: "fork", isolation: "worktree" })],
      {
        "fork append": "echo fork >> b.txt && pwd",
      },
    );
    const before = await readFile(join(dir, "b.txt"), "utf8").catch(() => "");
    const { requests } = await run(path);
    const forkRequests = requests.filter((r) => r.querySource?.startsWith("agent:"));
    expect(forkRequests.length).toBeGreaterThan(0);
    // A fork: its conversation starts with the parent's prompt, not a conversation of its own.
    const firstMessage = (JSON.parse(forkRequests[0]!.rawBody) as { messages: { content: unknown }[] })
      .messages[0];
    expect(JSON.stringify(firstMessage?.content)).toContain("Do the work.");
    expect(JSON.stringify(forkRequests.map((r) => r.rawBody))).toMatch(
      /isolated-agents\/agent-[0-9a-f]+\/workspaces\//,
    );
    expect(await readFile(join(dir, "b.txt"), "utf8")).toBe(`${before}fork\n`);
    expect(agentResults(requests)[0]?.startsWith("ERROR")).toBe(false);
    expect(git("worktree", "list").trim().split("\n")).toHaveLength(1);
    expect(agentRefs()).toBe("");
  });

  it("R-B2: without isolation (the control) the same sub-agent edits the project itself", async () => {
    const path = await scenario([agentCall("append two")], { "append two": "echo two >> a.txt && pwd" });
    const { requests } = await run(path);
    const forks = JSON.stringify(
      requests.filter((r) => r.querySource?.startsWith("agent:")).map((r) => r.rawBody),
    );
    expect(forks).not.toContain("isolated-agents");
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("one\ntwo\n");
    expect(agentResults(requests)[0]).not.toContain("[isolation:");
  });

  it("R-B4: two isolated sub-agents change the same line — one is merged, the other is reported to the parent as not applied with its worktree and diff kept; the next run of the session sweeps it", async () => {
    const path = await scenario(
      [agentCall("write red", { isolation: "worktree" }), agentCall("write blue", { isolation: "worktree" })],
      { "write red": "echo red > a.txt", "write blue": "echo blue > a.txt" },
    );
    const { result, requests } = await run(path);
    const results = agentResults(requests);
    expect(results).toHaveLength(2);
    const merged = results.filter((text) => text.includes("is merged into"));
    const conflicted = results.filter((text) => text.includes("was NOT applied"));
    expect([merged.length, conflicted.length]).toEqual([1, 1]);
    expect(conflicted[0]?.startsWith("ERROR")).toBe(true);
    expect(conflicted[0]).toContain("a.txt (the item and the workspace changed the same lines)");
    // The one merged first is in the tree; the other's line is not (never half of both).
    expect(["red\n", "blue\n"]).toContain(await readFile(join(dir, "a.txt"), "utf8"));
    // The loser's worktree and diff are kept (listed by git) until the session runs again.
    expect(worktrees()).toBe(2);
    const patch = /its diff in (\S+\.patch)/.exec(conflicted[0] ?? "")?.[1];
    expect(await readFile(patch ?? "", "utf8")).toContain("+");

    const resumed = await scenario([], {});
    await withSim(dir, ["--scenario", resumed], async (sim) => {
      const again = await runCliInProcess(["run", "--resume", result.session_id, "Anything left?"], {
        cwd: dir,
        env: sim.env,
      });
      expect(again.code, again.stderr).toBe(0);
    });
    expect(worktrees()).toBe(1);
    expect(agentRefs()).toBe("");
  });

  it("R-B2: an agent definition's `isolation: worktree` isolates its calls", async () => {
    await mkdir(join(dir, ".forkloop", "agents"), { recursive: true });
    await writeFile(
      join(dir, ".forkloop", "agents", "editor.md"),
      "---\nname: editor\ndescription: Edits files.\nisolation: worktree\n---\nEdit what you are asked to.\n",
    );
    git("add", ".");
    git("commit", "-qm", "agents");
    const path = await scenario([agentCall("append two", { subagent_type: "editor" })], {
      "append two": "echo two >> a.txt && pwd",
    });
    const { requests } = await run(path);
    const forks = JSON.stringify(
      requests.filter((r) => r.querySource === "agent:editor").map((r) => r.rawBody),
    );
    expect(forks).toContain("isolated-agents");
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("one\ntwo\n");
    expect(worktrees()).toBe(1);
    expect(await readdir(dir)).not.toContain("workspaces");
  });
});
