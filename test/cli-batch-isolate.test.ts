import { access, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchStateDir, runCliInProcess as runCli } from "@forkloop/cli/testing";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { toolThenTextBrain } from "@forkloop/sim/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git, gitProject } from "./support/git-project.js";

/**
 * R-B2, R-B3, R-B4 through the CLI's batch command (run in this process: the process is not
 * the subject) and the worker pool's real threads: every item runs one Bash command,
 * `pwd > where.txt`. Isolated, each item writes the path of its own worktree into its own copy:
 * the first applied wins, the others create the same file with other content — a conflict each,
 * their diffs kept. Without isolation (the control) they all write the project.
 */
let root: string;
let home: string;
let server: Simulator;
beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-cli-isolate-")));
  home = join(root, "home");
  await mkdir(home);
  server = await startSimulator({
    brain: toolThenTextBrain({ name: "Bash", input: { command: "pwd > where.txt" } }, "done"),
  });
  // The batch command's modules load here, not inside the first case's time budget.
  await runCli(["batch", "--help"], { cwd: root, env: env() });
});
/** Copies a test's batch made in memory (its conflicts' are kept there until a resume sweeps them). */
const placed: string[] = [];
afterAll(async () => {
  for (const dir of placed.filter((path) => path !== "")) await rm(dir, { recursive: true, force: true });
  await server.close();
  await rm(root, { recursive: true, force: true });
});

const project = (name: string, repo = true) =>
  gitProject(join(root, name), { "items.jsonl": '{"n":1}\n{"n":2}\n{"n":3}\n' }, repo);

const batch = (id: string, ...extra: string[]) => [
  "batch",
  "--items",
  "items.jsonl",
  "--prompt",
  "Record where you work ({{item.n}}).",
  "--permission-mode",
  "bypassPermissions",
  "--sandbox",
  "off",
  "--id",
  id,
  ...extra,
];

const env = () => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url, HOME: home });

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("R-B2: forkloop batch isolates editing items", () => {
  it("R-B2, R-B4: on by default for an editing mode (said once); each item in its own worktree; one change applied, the overlapping ones kept as conflicts", async () => {
    const dir = await project("default-on");
    const result = await runCli(batch("iso"), { cwd: dir, env: env() });
    expect(result.code, result.stderr).toBe(6); // some failed: the conflicts
    expect(result.stderr.match(/items are isolated/g)).toHaveLength(1);
    expect(result.stderr).toContain("--permission-mode bypassPermissions lets items edit");
    const batchDir = batchStateDir(dir, "iso", home);
    // R-B2: where the copies are made (in memory where the temp directory is tmpfs) is said.
    const copies = result.stderr.match(/item copies in (\S+)/)?.[1] ?? "";
    placed.push(copies);
    expect(copies, result.stderr).not.toBe("");
    // The command ran in an item's worktree, not in the project.
    const where = (await readFile(join(dir, "where.txt"), "utf8")).trim();
    expect(where.startsWith(copies)).toBe(true);
    const rows = (await readFile(join(batchDir, "results.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(rows.filter((row) => row.status === "succeeded").map((row) => row.applied)).toEqual([
      ["where.txt"],
    ]);
    const conflicts = rows.filter((row) => row.error?.code === "conflict");
    expect(conflicts).toHaveLength(2);
    for (const row of conflicts) {
      expect(row.error.conflict.files).toEqual([
        { path: "where.txt", reason: "created both in the workspace and by the item" },
      ]);
      expect(await readFile(row.error.conflict.patch, "utf8")).toContain("+++ b/where.txt");
    }
    expect(result.stdout).toContain("(2 conflicts: diffs kept, see the report)");
    expect(await readFile(join(batchDir, "report.md"), "utf8")).toContain("## Conflicts");
    // The succeeded item's worktree is gone; the two conflicts' are kept and listed.
    expect(git(dir, "worktree", "list").trim().split("\n")).toHaveLength(3);
  });

  it("R-B2 control: --no-isolate runs every item in the project itself", async () => {
    const dir = await project("control");
    const result = await runCli(batch("in-place", "--no-isolate"), { cwd: dir, env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain("items are isolated");
    expect((await readFile(join(dir, "where.txt"), "utf8")).trim()).toBe(dir);
  });

  it("R-B2: outside git, items work in copies of a snapshot (said once)", async () => {
    const dir = await project("plain", false);
    // FORKLOOP_WORKSPACES_DIR=batch: the copies in the batch's own directory.
    const result = await runCli(batch("copies", "--isolate"), {
      cwd: dir,
      env: { ...env(), FORKLOOP_WORKSPACES_DIR: "batch" },
    });
    expect(result.code, result.stderr).toBe(6);
    expect(result.stderr).toContain("not a git repository: a snapshot taken now");
    // Said once for the batch, not per item (it has three).
    expect(result.stderr.match(/not a git repository/g)).toHaveLength(1);
    const where = (await readFile(join(dir, "where.txt"), "utf8")).trim();
    const copies = join(batchStateDir(dir, "copies", home), "workspaces");
    expect(result.stderr).toContain(`item copies in ${copies} (FORKLOOP_WORKSPACES_DIR=batch)`);
    expect(where.startsWith(copies)).toBe(true);
  });

  it("bad input: a dirty tree with --isolate, or with isolation on by default, is exit 2 naming the files and the fix, before any state exists", async () => {
    const dir = await project("dirty");
    await writeFile(join(dir, "items.jsonl"), '{"n":1}\n{"n":9}\n');
    const result = await runCli(batch("dirty", "--isolate"), { cwd: dir, env: env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("uncommitted changes (1 path: items.jsonl)");
    expect(result.stderr).toContain("git add -A && git commit");
    expect(result.stderr).toContain("--no-isolate");
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(await exists(batchStateDir(dir, "dirty", home))).toBe(false);
    // Isolation on by default (an editing mode, no --isolate): the same refusal, nothing made.
    const byDefault = await runCli(batch("dirty-default"), { cwd: dir, env: env() });
    expect(byDefault.code).toBe(2);
    expect(byDefault.stderr).toContain("uncommitted changes (1 path: items.jsonl)");
    expect(await exists(batchStateDir(dir, "dirty-default", home))).toBe(false);
  });

  it("bad input: --isolate with --no-isolate (local or --queue) is exit 2 naming the fix", async () => {
    const dir = await project("flags");
    const both = await runCli(batch("both", "--isolate", "--no-isolate"), { cwd: dir, env: env() });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give one of --isolate and --no-isolate");
    const queued = await runCli(
      batch("queued", "--isolate", "--no-isolate", "--queue", "redis://127.0.0.1:1"),
      { cwd: dir, env: env() },
    );
    expect(queued.code).toBe(2);
    expect(queued.stderr).toContain("give one of --isolate and --no-isolate");
  });
});
