import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isolateSubAgent, isolationStateDir, sweepIsolatedAgents } from "./isolated-sub-agent.js";
import { EMPTY_USAGE } from "./sub-agent-types.js";

/**
 * R-B3 for an isolated sub-agent: its apply is cut part-way (one path written, the next not) — as a
 * kill -9 would leave it — and the session's resume finishes it from the durable plan: every path
 * once, nothing half-applied, the worktree then swept.
 */
let root: string;
let repo: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-cut-apply-")));
  repo = join(root, "repo");
  await mkdir(repo);
  await writeFile(join(repo, "a.txt"), "a\n");
  await writeFile(join(repo, "b.txt"), "b\n");
  git("init", "-q");
  git("add", ".");
  git("commit", "-qm", "base");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function git(...args: string[]): string {
  return execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], {
    cwd: repo,
    encoding: "utf8",
  });
}

describe("isolated sub-agent apply cut short (R-B3)", () => {
  it("R-B3: an isolated sub-agent's apply cut after its first path is finished by the session's resume — each path written once — and its worktree swept", async () => {
    const transcripts = { sessionsDir: join(root, "sessions"), sessionId: "s1" };
    const agentId = "agent-cut";
    const isolated = await isolateSubAgent({
      cwd: repo,
      workspaceRoots: [repo],
      stateDir: await isolationStateDir(transcripts, agentId),
      agentId,
    });
    await writeFile(join(isolated.cwd, "a.txt"), "a\nedited\n");
    await writeFile(join(isolated.cwd, "b.txt"), "b\nedited\n");
    // The cut: b.txt's temporary name is taken by a directory, so the apply stops after writing
    // a.txt — the state a kill -9 between the two paths leaves.
    await mkdir(join(repo, "b.txt.forkloop-apply"));
    await expect(
      isolated.finish({
        agentId,
        status: "completed",
        text: "done",
        turns: 1,
        usage: EMPTY_USAGE,
        costUsd: 0,
        durationMs: 1,
      }),
    ).rejects.toThrow();
    expect(await readFile(join(repo, "a.txt"), "utf8")).toBe("a\nedited\n");
    expect(await readFile(join(repo, "b.txt"), "utf8")).toBe("b\n");
    await rm(join(repo, "b.txt.forkloop-apply"), { recursive: true });

    await sweepIsolatedAgents(transcripts.sessionsDir, transcripts.sessionId);
    expect(await readFile(join(repo, "a.txt"), "utf8")).toBe("a\nedited\n");
    expect(await readFile(join(repo, "b.txt"), "utf8")).toBe("b\nedited\n");
    expect(git("worktree", "list").trim().split("\n")).toHaveLength(1);
    expect(git("for-each-ref", "refs/forkloop/agent-bases").trim()).toBe("");
    expect(git("status", "--porcelain")).toBe(" M a.txt\n M b.txt\n");
  });
});
