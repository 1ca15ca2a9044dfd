import { mkdir, mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchStateDir, runCliInProcess, type SimHandle } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAppendSim } from "./support/append-scenario.js";
import { git, gitProject } from "./support/git-project.js";

/**
 * R-B4 `--retry-conflicts` through the CLI, the worker pool, real git worktrees and the simulator:
 * two isolated items each append a line to the end of shared.txt. Run one at a time, the first is
 * applied and the second — made against the batch's base — touches the same spot: a conflict.
 * `--resume ID --retry-conflicts` runs that item again on the tree as it is now, so its append
 * lands after the first one's; the other item is not run again. The control resumes without the
 * flag: nothing runs, the conflict stays.
 */
let root: string;
let home: string;
let sim: SimHandle;
beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-retry-conflicts-")));
  home = join(root, "home");
  await mkdir(home);
  sim = await startAppendSim(root);
});
afterAll(async () => {
  await sim.stop();
  await rm(root, { recursive: true, force: true });
});

const project = (name: string) =>
  gitProject(join(root, name), { "items.jsonl": '{"n":1}\n{"n":2}\n', "shared.txt": "base\n" });

// R-B2: the copies (conflicts' kept ones too) under the test's own directory, not in shared memory.
const env = () => ({ ...sim.env, HOME: home, FORKLOOP_WORKSPACES_DIR: join(root, "copies") });
const cli = (dir: string, args: string[]) => runCliInProcess(args, { cwd: dir, env: env() });
const messages = async () => (await sim.requests()).filter((record) => record.path === "/v1/messages").length;

/** Runs the two items one after the other: item 1 applied, item 2 a conflict. */
async function conflictedBatch(id: string): Promise<string> {
  const dir = await project(id);
  const first = await cli(dir, [
    "batch",
    "--items",
    "items.jsonl",
    "--prompt",
    "Append your word (item {{item.n}}).",
    "--permission-mode",
    "bypassPermissions",
    "--sandbox",
    "off",
    "--concurrency",
    "1",
    "--id",
    id,
  ]);
  expect(first.code, first.stderr).toBe(6);
  expect(first.stdout).toContain(
    `forkloop batch --resume ${id} --retry-conflicts\` runs the conflict alone again`,
  );
  expect(await readFile(join(dir, "shared.txt"), "utf8")).toBe("base\none\n");
  expect((await rows(dir, id)).map((row) => [row.status, row.error?.code ?? null])).toEqual([
    ["succeeded", null],
    ["failed", "conflict"],
  ]);
  return dir;
}

async function rows(dir: string, id: string) {
  return (await readFile(join(batchStateDir(dir, id, home), "results.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}

describe("R-B4: forkloop batch --resume ID --retry-conflicts", () => {
  it("R-B4: the conflicted item runs again on the tree as it is now and is applied; the other item is untouched", async () => {
    const dir = await conflictedBatch("retry");
    const before = await messages();
    const result = await cli(dir, ["batch", "--resume", "retry", "--retry-conflicts"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("retrying 1 item (--retry-conflicts)");
    // One item ran (a tool call and its answer): the conflicted one.
    expect((await messages()) - before).toBe(2);
    expect(await readFile(join(dir, "shared.txt"), "utf8")).toBe("base\none\ntwo\n");
    const after = await rows(dir, "retry");
    expect(after.map((row) => [row.status, row.attempts, row.applied])).toEqual([
      ["succeeded", 1, ["shared.txt"]],
      ["succeeded", 2, ["shared.txt"]],
    ]);
    // The user's index, HEAD and branches are as they were; no worktree is left.
    expect(git(dir, "log", "--oneline").trim().split("\n")).toHaveLength(1);
    expect(git(dir, "status", "--porcelain")).toBe(" M shared.txt\n");
    expect(git(dir, "worktree", "list").trim().split("\n")).toHaveLength(1);
    // The round is settled: the ref its base was held by is gone.
    expect(git(dir, "for-each-ref", "refs/forkloop")).toBe("");
    // Two CLI runs with worktrees: a few seconds idle; the limit is for a shared, loaded machine.
  }, 60_000);

  it("R-B4 control: a resume without --retry-conflicts runs nothing and leaves the conflict as it is", async () => {
    const dir = await conflictedBatch("control");
    const before = await messages();
    const result = await cli(dir, ["batch", "--resume", "control"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("is finished");
    expect(await messages()).toBe(before);
    expect(await readFile(join(dir, "shared.txt"), "utf8")).toBe("base\none\n");
    expect((await rows(dir, "control"))[1]).toMatchObject({ status: "failed", error: { code: "conflict" } });
  }, 60_000);

  it("bad input: --retry-conflicts without --resume is exit 2 naming the fix", async () => {
    const dir = await project("flags");
    const alone = await cli(dir, [
      "batch",
      "--items",
      "items.jsonl",
      "--prompt",
      "x {{item.n}}",
      "--retry-conflicts",
    ]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("--retry-conflicts only applies to --resume ID");
  });
});
