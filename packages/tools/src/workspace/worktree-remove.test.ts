import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openWorkspaceIsolation } from "./isolated-workspace.js";

let root: string;
let project: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-remove-")));
  project = join(root, "project");
  await mkdir(join(project, "src"), { recursive: true });
  for (let n = 0; n < 20; n++) await writeFile(join(project, "src", `f${n}.txt`), `file ${n}\n`);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const gitIn = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, encoding: "utf8" });

const gone = (path: string) =>
  stat(path).then(
    () => false,
    () => true,
  );

/** What is still being deleted (a wait for the detached deletion, not a timing). */
async function emptied(dir: string): Promise<string[]> {
  for (let tries = 0; tries < 600; tries++) {
    const left = await readdir(dir).catch(() => []);
    if (left.length === 0) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return readdir(dir).catch(() => []);
}

describe("R-B2: an item copy's removal", () => {
  it("R-B2: a removed worktree leaves its place and git's list at once, its files are deleted by a process of its own; what a crash left being deleted is removed by the next sweep (control: a leftover copy is swept as before)", async () => {
    gitIn(project, "init", "-q");
    gitIn(project, "add", "-A");
    gitIn(project, "commit", "-qm", "base");
    const state = join(root, "state");
    const isolation = await openWorkspaceIsolation({ cwd: project, batchDir: state });
    const copy = await isolation.create("removed");
    await writeFile(join(copy.dir, "src", "f1.txt"), "item\n");
    await writeFile(join(copy.dir, "made.txt"), "new\n");
    await copy.remove();
    expect(await gone(copy.root)).toBe(true);
    expect(gitIn(project, "worktree", "list").trim().split("\n")).toHaveLength(1);
    expect(await readdir(isolation.workspacesDir)).toEqual([]);
    expect(await emptied(`${isolation.workspacesDir}-removing`)).toEqual([]);
    expect(await readFile(join(project, "src", "f1.txt"), "utf8")).toBe("file 1\n");

    // A kill -9 (or a reboot) before the detached deletion finished leaves files there: swept.
    const cut = join(`${isolation.workspacesDir}-removing`, "cut-short", "src");
    await mkdir(cut, { recursive: true });
    await writeFile(join(cut, "f2.txt"), "left\n");
    const leftover = await isolation.create("leftover");
    // Control: a copy a kill -9 left in use is swept too.
    expect(await isolation.sweep()).toBe(1);
    expect(await gone(`${isolation.workspacesDir}-removing`)).toBe(true);
    expect(await gone(leftover.root)).toBe(true);
    expect(gitIn(project, "worktree", "list").trim().split("\n")).toHaveLength(1);
  });

  it("R-B2: a copy-mode item copy is put back and removed the same way (its old files deleted aside, the new copy at the base)", async () => {
    const state = join(root, "state");
    const isolation = await openWorkspaceIsolation({ cwd: project, batchDir: state });
    expect(isolation.mode).toBe("copy");
    const copy = await isolation.create("copied");
    await writeFile(join(copy.dir, "src", "f3.txt"), "item\n");
    await writeFile(join(copy.dir, "made.txt"), "new\n");
    expect((await copy.changes()).map((change) => change.path)).toEqual(["made.txt", "src/f3.txt"]);
    await copy.reset();
    expect(await copy.changes()).toEqual([]);
    expect(await readFile(join(copy.dir, "src", "f3.txt"), "utf8")).toBe("file 3\n");
    await copy.remove();
    expect(await gone(copy.root)).toBe(true);
    expect(await emptied(`${isolation.workspacesDir}-removing`)).toEqual([]);
    await mkdir(join(`${isolation.workspacesDir}-removing`, "cut-short"), { recursive: true });
    expect(await isolation.sweep()).toBe(0);
    expect(await gone(`${isolation.workspacesDir}-removing`)).toBe(true);
  });
});
