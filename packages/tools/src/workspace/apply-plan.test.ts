import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { executePlan, mergeChanges, writePlan } from "./apply-changes.js";

let root: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-plan-")));
  await mkdir(join(root, "tree"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("R-B3: a plan carried out on the tree", () => {
  it("R-B3: a file the item replaced with a directory of the same name is deleted before the directory's file is written (paths inside another are carried out one by one), and carried out again it writes nothing", async () => {
    const tree = join(root, "tree");
    await writeFile(join(tree, "x"), "a file\n");
    await writeFile(join(tree, "other.txt"), "other\n");
    const merged = await mergeChanges(tree, [
      {
        path: "other.txt",
        before: Buffer.from("other\n"),
        after: Buffer.from("other, edited\n"),
        mode: 0o644,
      },
      { path: "x", before: Buffer.from("a file\n"), after: null, mode: 0o644 },
      { path: "x/y", before: null, after: Buffer.from("in the directory\n"), mode: 0o644 },
    ]);
    if (!merged.ok) throw new Error(JSON.stringify(merged.conflicts));
    const planDir = join(root, "plan");
    await writePlan(planDir, merged.plan, merged.contents);
    const done = await executePlan(tree, planDir, merged.plan, merged.contents);
    expect(done).toEqual({ written: ["other.txt", "x", "x/y"], diverged: [] });
    expect((await stat(join(tree, "x"))).isDirectory()).toBe(true);
    expect(await readFile(join(tree, "x", "y"), "utf8")).toBe("in the directory\n");
    expect(await readFile(join(tree, "other.txt"), "utf8")).toBe("other, edited\n");
    // Carried out again (a resume after a kill): everything is there already, nothing is written.
    expect(await executePlan(tree, planDir, merged.plan)).toEqual({ written: [], diverged: [] });
  });
});
