import { execFileSync } from "node:child_process";
import {
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openWorkspaceIsolation, type WorkspaceIsolation } from "./isolated-workspace.js";

let root: string;
let project: string;
let isolation: WorkspaceIsolation;
beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-reset-")));
  project = join(root, "project");
  await mkdir(join(project, "src"), { recursive: true });
  await mkdir(join(project, "vendor"), { recursive: true });
  await writeFile(join(project, "src", "edited.txt"), "base\n");
  await writeFile(join(project, "src", "deleted.txt"), "gone soon\n");
  await writeFile(join(project, "vendor", "lib.js"), "vendored\n");
  // `vendor` is ignored, its file tracked all the same (added with --force): a link put where the
  // directory was is ignored too, so the item's change names only the file as deleted.
  await writeFile(join(project, ".gitignore"), "vendor\nbuild/\n");
  gitIn(project, "init", "-q");
  gitIn(project, "add", "-A");
  gitIn(project, "add", "--force", "vendor/lib.js");
  gitIn(project, "commit", "-qm", "base");
  await mkdir(join(root, "state"));
  isolation = await openWorkspaceIsolation({ cwd: project, batchDir: join(root, "state") });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const gitIn = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, encoding: "utf8" });

const atBase = (dir: string) => gitIn(dir, "status", "--porcelain", "--ignored", "--untracked-files=all");

describe("R-B2: a used worktree put back to the base for the next item", () => {
  it("R-B2: the paths its item's change named are put back in place (a changed file is written over, not replaced as git replaces it), created files and their directories removed (control: an ignored file the change did not name is left to git, which removes it)", async () => {
    const copy = await isolation.create("restore");
    const edited = join(copy.dir, "src", "edited.txt");
    await writeFile(edited, "base\nitem\n");
    // Held open over the reset: a file written over reads the base through it, a replaced one the item's.
    const held = await open(edited, "r");
    await rm(join(copy.dir, "src", "deleted.txt"));
    await mkdir(join(copy.dir, "made", "deeper"), { recursive: true });
    await writeFile(join(copy.dir, "made", "deeper", "new.txt"), "new\n");
    expect((await copy.changes()).map((change) => change.path)).toEqual([
      "made/deeper/new.txt",
      "src/deleted.txt",
      "src/edited.txt",
    ]);
    await copy.reset();
    expect(atBase(copy.dir)).toBe("");
    expect(await readdir(copy.dir)).not.toContain("made");
    expect(await readFile(edited, "utf8")).toBe("base\n");
    // Written back, not checked out again by git (which unlinks the file and makes a new one).
    expect((await held.readFile()).toString()).toBe("base\n");
    await held.close();

    // Control: an ignored file is in no change; the status finds it, and git's reset removes it.
    await writeFile(edited, "base\nagain\n");
    await mkdir(join(copy.dir, "build"));
    await writeFile(join(copy.dir, "build", "out.js"), "ignored\n");
    expect((await copy.changes()).map((change) => change.path)).toEqual(["src/edited.txt"]);
    await copy.reset();
    expect(atBase(copy.dir)).toBe("");
    expect(await readdir(copy.dir)).not.toContain("build");
    await copy.remove();
  });

  it("R-B2, R-S4: a directory the item replaced with a link out of the copy is never written through (the base's file is not put in the link's target); git puts the directory back", async () => {
    const outside = join(root, "outside");
    await mkdir(outside);
    const copy = await isolation.create("link");
    await rename(join(copy.dir, "vendor"), join(root, "moved-vendor"));
    await symlink(outside, join(copy.dir, "vendor"));
    // The link is ignored: the change names vendor/lib.js as deleted, and nothing unsupported.
    const changes = await copy.changes();
    expect(changes.map((change) => [change.path, change.after, change.unsupported])).toEqual([
      ["vendor/lib.js", null, undefined],
    ]);
    await copy.reset();
    expect(await readdir(outside)).toEqual([]);
    expect(atBase(copy.dir)).toBe("");
    expect((await stat(join(copy.dir, "vendor"))).isDirectory()).toBe(true);
    expect(await readFile(join(copy.dir, "vendor", "lib.js"), "utf8")).toBe("vendored\n");
    await copy.remove();
  });

  it("R-B2: reading a copy's change and resetting it write back its refreshed index (its own), so a status stops re-reading every file its checkout left racily clean (control: a read-only status, as forkloop's git runs elsewhere, leaves the index as it was)", async () => {
    const copy = await isolation.create("refresh");
    const index = gitIn(copy.dir, "rev-parse", "--path-format=absolute", "--git-path", "index").trim();
    // The checkout's files and its index share a second: git's racy-clean rule applies to them all
    // until an index is written in a later second.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const written = async () => (await stat(index)).mtimeMs;
    const checkedOut = await written();
    execFileSync("git", ["status", "--porcelain"], {
      cwd: copy.dir,
      env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" },
    });
    expect(await written()).toBe(checkedOut);
    await writeFile(join(copy.dir, "src", "edited.txt"), "base\nitem\n");
    await copy.changes();
    const afterRead = await written();
    expect(afterRead).toBeGreaterThan(checkedOut);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await copy.reset();
    expect(await written()).toBeGreaterThan(afterRead);
    expect(atBase(copy.dir)).toBe("");
    await copy.remove();
  });
});
