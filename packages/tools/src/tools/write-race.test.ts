import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileAtomicSync } from "../atomic-write.js";
import { callTool, createOutsideDir, createToolTestContext, type TempWorkspace } from "../testing/index.js";
import { editTool } from "./edit.js";
import { readTool } from "./read.js";
import { writeTool } from "./write.js";

/**
 * R-S4, R-S10: Write and Edit write into the directory as opened from the workspace root, one
 * component at a time, never following a symlink — so a directory swapped for a symlink between
 * the permission check and the write (by a sandboxed command of a parallel sub-agent, a batch
 * item, any process) cannot carry the write to `.git/hooks` or outside the workspace. Both under
 * /var/tmp (one file system; not hidden from anything).
 */
let ws: TempWorkspace;
let outside: TempWorkspace;
beforeEach(() => {
  ws = createOutsideDir("forkloop-race-ws-");
  outside = createOutsideDir("forkloop-race-outside-");
});
afterEach(() => {
  ws.cleanup();
  outside.cleanup();
});

describe("R-S4, R-S10: writes through a directory swapped for a symlink after the check", () => {
  it("R-S4: a path checked while src/ was a directory, written after src/ became a symlink out: refused (ELOOP, ENOTDIR) with the roots; without them the write lands outside (control)", () => {
    mkdirSync(join(ws.root, "src"));
    const checked = join(ws.root, "src", "a.txt");
    renameSync(join(ws.root, "src"), join(ws.root, "src-away"));
    symlinkSync(outside.root, join(ws.root, "src"));
    expect(() => writeFileAtomicSync(checked, Buffer.from("x"), { beneath: [ws.root] })).toThrow(
      /ELOOP|ENOTDIR/,
    );
    expect(() =>
      writeFileAtomicSync(join(ws.root, "src", "new", "b.txt"), Buffer.from("x"), {
        beneath: [ws.root],
        createParents: true,
      }),
    ).toThrow(/ELOOP|ENOTDIR/);
    expect(readdirSync(outside.root)).toEqual([]);
    writeFileAtomicSync(checked, Buffer.from("x"));
    expect(readdirSync(outside.root)).toEqual(["a.txt"]);
  });

  it("R-S10: a name that leads through a symlink into .git/hooks is refused by Write and Edit outside bypassPermissions (the check judged the name); by its real path the check decides; in bypassPermissions it is written (control)", async () => {
    mkdirSync(join(ws.root, ".git", "hooks"), { recursive: true });
    writeFileSync(join(ws.root, ".git", "hooks", "pre-commit"), "old\n");
    symlinkSync(join(ws.root, ".git", "hooks"), join(ws.root, "cfg"));
    const accept = createToolTestContext({ cwd: ws.root, permissionMode: "acceptEdits" });
    const write = await callTool(
      writeTool,
      { file_path: join(ws.root, "cfg", "post-commit"), content: "x" },
      accept,
    );
    expect(write.isError).toBe(true);
    expect(String(write.content)).toMatch(
      /leads through a symlink to .*\.git\/hooks\/post-commit.*give the real path/,
    );
    await callTool(readTool, { file_path: join(ws.root, "cfg", "pre-commit") }, accept);
    const edit = await callTool(
      editTool,
      { file_path: join(ws.root, "cfg", "pre-commit"), old_string: "old", new_string: "new" },
      accept,
    );
    expect(edit.isError).toBe(true);
    expect(readdirSync(join(ws.root, ".git", "hooks")).sort()).toEqual(["pre-commit"]);
    const bypass = createToolTestContext({ cwd: ws.root, permissionMode: "bypassPermissions" });
    await callTool(writeTool, { file_path: join(ws.root, "cfg", "post-commit"), content: "x" }, bypass);
    expect(readdirSync(join(ws.root, ".git", "hooks")).sort()).toEqual(["post-commit", "pre-commit"]);
  });

  it("R-S4: 300 Writes and Edits while another process swaps src/ for a symlink out and back: nothing outside, and every write that went through is in the workspace", async () => {
    mkdirSync(join(ws.root, "src"));
    for (let index = 0; index < 150; index++) writeFileSync(join(ws.root, "src", `e${index}.txt`), "old\n");
    const js = `const fs=require("fs");const end=Date.now()+4000;while(Date.now()<end){try{fs.renameSync("src","src-dir")}catch{}try{fs.symlinkSync(${JSON.stringify(outside.root)},"src")}catch{}try{fs.unlinkSync("src")}catch{}try{fs.renameSync("src-dir","src")}catch{}}`;
    const racer = spawn(process.execPath, ["-e", js], { cwd: ws.root, stdio: "ignore" });
    const closed = new Promise((resolve) => racer.on("close", resolve));
    const context = createToolTestContext({ cwd: ws.root, permissionMode: "bypassPermissions" });
    try {
      for (let index = 0; index < 150; index++) {
        const file = join(ws.root, "src", `e${index}.txt`);
        await callTool(
          writeTool,
          { file_path: join(ws.root, "src", `w${index}.txt`), content: "new\n" },
          context,
        );
        await callTool(readTool, { file_path: file }, context);
        await callTool(editTool, { file_path: file, old_string: "old", new_string: "new" }, context);
      }
    } finally {
      await closed;
    }
    expect(readdirSync(outside.root)).toEqual([]);
    const written = readdirSync(join(ws.root, "src")).filter((name) => name.startsWith("w"));
    for (const name of written) expect(readFileSync(join(ws.root, "src", name), "utf8")).toBe("new\n");
  }, 60_000);
});
