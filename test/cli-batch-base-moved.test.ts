import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchStateDir, runCliInProcess, type SimHandle, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git, gitProject } from "./support/git-project.js";

/**
 * R-B3, R-B4 bad input: the base moves while an isolated batch runs — the user commits (HEAD moves)
 * while an item is running. The item's change was made against the batch's base; the apply merges
 * it over the tree as it is then: a change to other lines is kept beside the user's commit (nothing
 * lost, HEAD where the user put it), a change to the same line is a conflict with the user's line
 * kept. Through the CLI, the worker pool, real git worktrees and the simulator; "the user" is the
 * item's own Bash command, run while the item runs, in the project rather than the item's worktree.
 */
let root: string;
let home: string;
let sim: SimHandle;
const LINES = "top\nmiddle\nbottom\n";
beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-base-moved-")));
  home = join(root, "home");
  await mkdir(home);
  // The item edits `top` in its worktree; meanwhile "the user" commits an edit of `line` in the project.
  const item = (n: string, line: string) => ({
    match: { lastUserText: `(item ${n})` },
    reply: {
      content: [
        {
          type: "tool_use",
          name: "Bash",
          input: {
            command: `sed -i 's/^top$/top by the item/' lines.txt && cd ${join(root, `moved-${n}`)} && sed -i 's/^${line}$/${line} by the user/' lines.txt && git -c user.name=u -c user.email=u@u commit -qam "the user's commit"`,
          },
        },
      ],
    },
  });
  await writeFile(
    join(root, "scenario.json"),
    JSON.stringify({
      rules: [
        { match: { turn: { min: 1 } }, reply: { content: [{ type: "text", text: "edited" }] } },
        item("1", "bottom"),
        item("2", "top"),
      ],
    }),
  );
  sim = await startSimInProcess(root, ["--scenario", "scenario.json"]);
});
afterAll(async () => {
  await sim?.stop();
  await rm(root, { recursive: true, force: true });
});

async function movedBatch(n: string) {
  const dir = await gitProject(join(root, `moved-${n}`), {
    "items.jsonl": `{"n":${n}}\n`,
    "lines.txt": LINES,
  });
  const result = await runCliInProcess(
    [
      "batch",
      "--items",
      "items.jsonl",
      "--prompt",
      "Edit the top line (item {{item.n}}).",
      "--permission-mode",
      "bypassPermissions",
      "--sandbox",
      "off",
      "--id",
      `moved-${n}`,
    ],
    // R-B2: the copies (a conflict's kept one too) under the test's own directory, not in shared memory.
    { cwd: dir, env: { ...sim.env, HOME: home, FORKLOOP_WORKSPACES_DIR: join(root, "copies") } },
  );
  const [row] = (await readFile(join(batchStateDir(dir, `moved-${n}`, home), "results.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { status: string; applied?: string[]; error?: { code: string } });
  return { dir, result, row: row! };
}

describe("bad input: the base moves while an isolated batch runs (R-B3, R-B4)", { timeout: 60_000 }, () => {
  it("R-B4: the user commits another line meanwhile — the item's change is merged over the moved tree; the user's commit and line are kept", async () => {
    const { dir, result, row } = await movedBatch("1");
    expect(result.code, result.stderr).toBe(0);
    expect(row).toMatchObject({ status: "succeeded", applied: ["lines.txt"] });
    expect(await readFile(join(dir, "lines.txt"), "utf8")).toBe(
      "top by the item\nmiddle\nbottom by the user\n",
    );
    // HEAD is the user's commit, and the item's change is on top of it, uncommitted.
    expect(git(dir, "log", "--format=%s").trim().split("\n")).toEqual(["the user's commit", "base"]);
    expect(git(dir, "status", "--porcelain")).toBe(" M lines.txt\n");
    expect(git(dir, "worktree", "list").trim().split("\n")).toHaveLength(1);
  });

  it("R-B4: the user commits the same line meanwhile — a conflict, the user's line kept, never a silent overwrite", async () => {
    const { dir, result, row } = await movedBatch("2");
    expect(result.code, result.stderr).toBe(7); // its one item failed
    expect(row).toMatchObject({ status: "failed", error: { code: "conflict" } });
    expect(result.stderr).toContain("the item and the workspace changed the same lines");
    expect(await readFile(join(dir, "lines.txt"), "utf8")).toBe("top by the user\nmiddle\nbottom\n");
    expect(git(dir, "status", "--porcelain")).toBe("");
  });
});
