import { execFileSync } from "node:child_process";
import { access, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openWorkspaceIsolation } from "./isolated-workspace.js";

let root: string;
let project: string;
let state: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-rebase-")));
  project = join(root, "project");
  state = join(root, "state");
  await mkdir(project);
  await mkdir(state);
  await writeFile(join(project, "shared.txt"), "base\n");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const gitIn = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, encoding: "utf8" });

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("R-B4: an isolation's base moved to the tree as it is now (--retry-conflicts)", () => {
  it("R-B4: worktree mode — copies made after the rebase hold the applied (uncommitted) change and new files; the user's HEAD and index are untouched; a reopen keeps the new base", async () => {
    gitIn(project, "init", "-q");
    gitIn(project, "add", "-A");
    gitIn(project, "commit", "-qm", "base");
    const first = await openWorkspaceIsolation({ cwd: project, batchDir: state });
    // What the batch applied so far: an edit and a new file, not committed.
    await writeFile(join(project, "shared.txt"), "base\none\n");
    await writeFile(join(project, "added.txt"), "new\n");
    const moved = await first.rebase();
    expect(moved.base).not.toBe(first.base);
    const copy = await moved.create("item\u00001");
    expect(await readFile(join(copy.dir, "shared.txt"), "utf8")).toBe("base\none\n");
    expect(await readFile(join(copy.dir, "added.txt"), "utf8")).toBe("new\n");
    // The item's change is measured against the new base: only what it does itself.
    expect(await copy.changes()).toEqual([]);
    await writeFile(join(copy.dir, "shared.txt"), "base\none\ntwo\n");
    expect((await copy.changes()).map((change) => change.path)).toEqual(["shared.txt"]);
    await copy.remove();
    expect(gitIn(project, "log", "--oneline").trim().split("\n")).toHaveLength(1);
    expect(gitIn(project, "status", "--porcelain")).toBe(" M shared.txt\n?? added.txt\n");
    const reopened = await openWorkspaceIsolation({ cwd: project, batchDir: state });
    expect(reopened.base).toBe(moved.base);
  });

  it("R-B4: copy mode — a new snapshot replaces the old one (recorded first, then the old one removed)", async () => {
    const first = await openWorkspaceIsolation({ cwd: project, batchDir: state });
    expect(first.mode).toBe("copy");
    await writeFile(join(project, "shared.txt"), "base\none\n");
    const moved = await first.rebase();
    const copy = await moved.create("item\u00001");
    expect(await readFile(join(copy.dir, "shared.txt"), "utf8")).toBe("base\none\n");
    expect(await copy.changes()).toEqual([]);
    expect(await exists(join(state, "base"))).toBe(false);
    const record = JSON.parse(await readFile(join(state, "isolation.json"), "utf8"));
    expect(record.snapshot).toMatch(/^base-\d+$/);
    const reopened = await openWorkspaceIsolation({ cwd: project, batchDir: state });
    const again = await reopened.create("item\u00002");
    expect(await readFile(join(again.dir, "shared.txt"), "utf8")).toBe("base\none\n");
  });
});
