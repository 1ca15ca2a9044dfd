import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, statfs, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SHM_COPIES_DIR } from "../workspace-paths.js";
import { COPIES_FILE } from "./copies-placement.js";
import { openWorkspaceIsolation } from "./isolated-workspace.js";

let root: string;
let project: string;
let state: string;
const placed: string[] = [];
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-place-")));
  project = join(root, "project");
  state = join(root, "state");
  await mkdir(join(project, "src"), { recursive: true });
  for (let n = 0; n < 20; n++) await writeFile(join(project, "src", `f${n}.txt`), `file ${n}\n`);
  gitIn(project, "init", "-q");
  gitIn(project, "add", "-A");
  gitIn(project, "commit", "-qm", "base");
});
afterEach(async () => {
  for (const dir of placed.splice(0)) await rm(dir, { recursive: true, force: true });
  await rm(root, { recursive: true, force: true });
});

const gitIn = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, encoding: "utf8" });
const listed = () => gitIn(project, "worktree", "list").trim().split("\n");
const gone = (path: string) =>
  stat(path).then(
    () => false,
    () => true,
  );

/** A memory-backed directory: tmpfs on the Linux hosts the tests run on. */
const MEMORY = "/dev/shm";
const TMPFS_MAGIC = 0x01021994;

describe("R-B2: where a batch run's item copies are made", () => {
  it("R-B2: in a memory-backed directory when it has room for the pool — recorded in the batch's directory first, so a resume placed elsewhere still sweeps them and git forgets them (control: without a placement, in the batch's directory)", async () => {
    expect((await statfs(MEMORY)).type).toBe(TMPFS_MAGIC);
    const plain = await openWorkspaceIsolation({ cwd: project, batchDir: join(root, "plain") });
    expect(plain.workspacesDir).toBe(join(root, "plain", "workspaces"));

    const isolation = await openWorkspaceIsolation({
      cwd: project,
      batchDir: state,
      copies: { pool: 2, memory: MEMORY },
    });
    placed.push(isolation.workspacesDir);
    expect(isolation.workspacesDir.startsWith(join(MEMORY, "forkloop-"))).toBe(true);
    expect(isolation.copiesAt).toContain("in memory");
    expect(((await stat(join(isolation.workspacesDir, ".."))).mode & 0o777).toString(8)).toBe("700");
    expect(JSON.parse(await readFile(join(state, COPIES_FILE), "utf8")).dirs).toEqual([
      isolation.workspacesDir,
    ]);
    const copy = await isolation.create("item\u00001");
    expect(copy.dir.startsWith(isolation.workspacesDir)).toBe(true);
    await writeFile(join(copy.dir, "src", "f1.txt"), "item\n");
    expect((await copy.changes()).map((change) => change.path)).toEqual(["src/f1.txt"]);
    expect(listed()).toHaveLength(2);

    // Killed there; the resume keeps its copies in the batch's directory (FORKLOOP_WORKSPACES_DIR=batch).
    const resumed = await openWorkspaceIsolation({
      cwd: project,
      batchDir: state,
      copies: { pool: 2, dir: "batch", memory: MEMORY },
    });
    expect(resumed.workspacesDir).toBe(join(state, "workspaces"));
    expect(await resumed.sweep()).toBe(1);
    expect(await gone(copy.root)).toBe(true);
    expect(await gone(isolation.workspacesDir)).toBe(true);
    expect(listed()).toHaveLength(1);
  });

  it("R-B2: a memory-backed directory wiped (a reboot) loses only scratch: the resume's sweep makes git forget the lost copies and new ones are made there again", async () => {
    const isolation = await openWorkspaceIsolation({
      cwd: project,
      batchDir: state,
      copies: { pool: 2, memory: MEMORY },
    });
    placed.push(isolation.workspacesDir);
    await isolation.create("a");
    await isolation.create("b");
    expect(listed()).toHaveLength(3);
    await rm(isolation.workspacesDir, { recursive: true, force: true });
    const resumed = await openWorkspaceIsolation({
      cwd: project,
      batchDir: state,
      copies: { pool: 2, memory: MEMORY },
    });
    expect(resumed.workspacesDir).toBe(isolation.workspacesDir);
    await resumed.sweep();
    expect(listed()).toHaveLength(1);
    const again = await resumed.create("a");
    expect(await readFile(join(again.dir, "src", "f1.txt"), "utf8")).toBe("file 1\n");
    // The run's end: the copy removed and the emptied directory with it (nothing left in memory).
    await again.remove();
    await resumed.close();
    expect(await gone(resumed.workspacesDir)).toBe(true);
    expect(listed()).toHaveLength(1);
  });

  it("R-B2: too little room for the pool — the batch's directory, and the start line says why; without a named one, the first tmpfs of the temp directory, $XDG_RUNTIME_DIR and /dev/shm", async () => {
    const isolation = await openWorkspaceIsolation({
      cwd: project,
      batchDir: state,
      copies: { pool: 1e9, memory: MEMORY },
    });
    expect(isolation.workspacesDir).toBe(join(state, "workspaces"));
    expect(isolation.copiesAt).toContain(`${MEMORY} has too little room for 1000000000 copies`);
    expect(await readdir(state)).not.toContain(COPIES_FILE);
    // Unnamed: the temp directory or $XDG_RUNTIME_DIR when tmpfs, else /dev/shm — in memory here —
    // in the one directory under /dev an item's file tools accept.
    const unnamed = await openWorkspaceIsolation({
      cwd: project,
      batchDir: join(root, "b"),
      copies: { pool: 1 },
    });
    placed.push(unnamed.workspacesDir);
    expect(unnamed.copiesAt).toContain("in memory");
    if (unnamed.workspacesDir.startsWith("/dev/"))
      expect(unnamed.workspacesDir.startsWith(`${SHM_COPIES_DIR}/`)).toBe(true);
  });

  it("R-B2: FORKLOOP_WORKSPACES_DIR places them under a directory of the user's own there (copy mode too); a relative one, or one under /dev, is refused", async () => {
    const scratch = join(root, "scratch");
    const outside = join(root, "outside");
    await mkdir(outside);
    await writeFile(join(outside, "a.txt"), "a\n");
    const isolation = await openWorkspaceIsolation({
      cwd: outside,
      batchDir: state,
      copies: { pool: 4, dir: scratch },
    });
    expect(isolation.mode).toBe("copy");
    expect(isolation.workspacesDir.startsWith(join(scratch, "forkloop-"))).toBe(true);
    expect(isolation.copiesAt).toContain("FORKLOOP_WORKSPACES_DIR");
    const copy = await isolation.create("c");
    expect(await readFile(join(copy.dir, "a.txt"), "utf8")).toBe("a\n");
    await copy.remove();
    await isolation.close();
    expect(await gone(isolation.workspacesDir)).toBe(true);
    await expect(
      openWorkspaceIsolation({
        cwd: project,
        batchDir: join(root, "other"),
        copies: { pool: 1, dir: "rel" },
      }),
    ).rejects.toThrow(/not an absolute path/);
    await expect(
      openWorkspaceIsolation({
        cwd: project,
        batchDir: join(root, "other"),
        copies: { pool: 1, dir: "/dev/forkloop-copies" },
      }),
    ).rejects.toThrow(/file tools refuse/);
  });
});
