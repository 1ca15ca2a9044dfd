import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, realpath, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openWorkspaceIsolation, type WorkspaceIsolation } from "./isolated-workspace.js";

let root: string;
let isolation: WorkspaceIsolation;
beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-changes-")));
  const project = join(root, "project");
  await mkdir(join(project, "src"), { recursive: true });
  await writeFile(join(project, "src", "edited.txt"), "base\n");
  await writeFile(join(project, "src", "deleted.txt"), "gone soon\n");
  await writeFile(join(project, "src", "staged.txt"), "kept\n");
  await writeFile(join(project, "run.sh"), "echo\n");
  await writeFile(join(project, ".gitignore"), "build/\n");
  gitIn(project, "init", "-q");
  gitIn(project, "add", "-A");
  gitIn(project, "commit", "-qm", "base");
  await mkdir(join(root, "state"));
  isolation = await openWorkspaceIsolation({ cwd: project, batchDir: join(root, "state") });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const gitIn = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, encoding: "utf8" });

/** What a careless item leaves, read as changes; `commit` ends it with a commit of its own. */
async function itemChanges(key: string, commit: boolean) {
  const copy = await isolation.create(key);
  await writeFile(join(copy.dir, "src", "edited.txt"), "base\nitem\n");
  await unlink(join(copy.dir, "src", "deleted.txt"));
  await writeFile(join(copy.dir, "src", "new file.txt"), "new\n");
  await mkdir(join(copy.dir, "made"));
  await writeFile(join(copy.dir, "made", "deep.txt"), "deep\n");
  await chmod(join(copy.dir, "run.sh"), 0o755);
  await mkdir(join(copy.dir, "build"));
  await writeFile(join(copy.dir, "build", "out.js"), "ignored\n");
  // Staged with another content, then put back: nothing changed.
  await writeFile(join(copy.dir, "src", "staged.txt"), "other\n");
  gitIn(copy.dir, "add", "src/staged.txt");
  await writeFile(join(copy.dir, "src", "staged.txt"), "kept\n");
  if (commit) {
    gitIn(copy.dir, "add", "-A");
    gitIn(copy.dir, "commit", "-qm", "the item's own commit");
  }
  const changes = await copy.changes();
  await copy.remove();
  return changes;
}

describe("R-B2: an item's change read from its worktree", () => {
  it("R-B2: HEAD at the base (git status and the files) gives what an item that committed gives (the index route): edits, deletions, new files, modes; ignored files and a file put back left out", async () => {
    const fromStatus = await itemChanges("status", false);
    const fromIndex = await itemChanges("index", true);
    expect(fromStatus).toEqual(fromIndex);
    expect(
      fromStatus.map((change) => [
        change.path,
        change.before?.toString() ?? null,
        change.after?.toString() ?? null,
        change.mode,
      ]),
    ).toEqual([
      ["made/deep.txt", null, "deep\n", 0o644],
      ["run.sh", "echo\n", "echo\n", 0o755],
      ["src/deleted.txt", "gone soon\n", null, 0o644],
      ["src/edited.txt", "base\n", "base\nitem\n", 0o644],
      ["src/new file.txt", null, "new\n", 0o644],
    ]);
  });

  it("R-B2: a symlink and a repository of the item's own are listed as never applied", async () => {
    const copy = await isolation.create("odd");
    await symlink("/etc/passwd", join(copy.dir, "link"));
    await mkdir(join(copy.dir, "nested"));
    await writeFile(join(copy.dir, "nested", "a.txt"), "a\n");
    gitIn(join(copy.dir, "nested"), "init", "-q");
    gitIn(join(copy.dir, "nested"), "add", "-A");
    gitIn(join(copy.dir, "nested"), "commit", "-qm", "nested");
    const changes = await copy.changes();
    await copy.remove();
    expect(changes.map((change) => [change.path, change.unsupported])).toEqual([
      ["link", "a symlink"],
      ["nested", "a submodule"],
    ]);
  });
});
