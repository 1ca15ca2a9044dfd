import { spawn } from "node:child_process";
import { linkSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  callTool,
  createTempWorkspace,
  resultText,
  type TempWorkspace,
  useTempWorkspace,
} from "../testing/index.js";
import { createGrepTool } from "../tools/grep.js";

const ws = useTempWorkspace();
let outside: TempWorkspace;
beforeEach(() => {
  outside = createTempWorkspace("forkloop-grep-outside-");
});
afterEach(() => outside.cleanup());

const grep = createGrepTool({ backend: "js", maxFileBytes: 1024 });

describe("R-S4: Grep opens each file once, inside the workspace, with a size cap", () => {
  it("R-S4: a file over the cap is skipped and named; the rest of the search goes on", async () => {
    writeFileSync(join(ws.root, "big.txt"), `MARK ${"x".repeat(5000)}\n`);
    writeFileSync(join(ws.root, "small.txt"), "MARK\n");
    const text = resultText(await callTool(grep, { pattern: "MARK" }, ws.context()));
    expect(text).toMatch(/^Found 1 file\n.*small\.txt/);
    expect(text).toMatch(/Skipped 1 file\(s\) larger than 0 MB: .*big\.txt/);
  });

  it("R-S4: a hard-linked file (maybe an outside file) is not searched, and the output says so", async () => {
    writeFileSync(join(outside.root, "secret.txt"), "MARK outside secret\n");
    linkSync(join(outside.root, "secret.txt"), join(ws.root, "linked.txt"));
    const text = resultText(await callTool(grep, { pattern: "MARK", output_mode: "content" }, ws.context()));
    expect(text).not.toContain("outside secret");
    expect(text).toMatch(/Skipped 1 file\(s\) with more than one hard link/);
  });

  it("R-S4: 120 searches while a hostile process flips a symlink to an outside file leak nothing", async () => {
    writeFileSync(join(outside.root, "secret.txt"), "MARK RACE-SECRET\n");
    mkdirSync(join(ws.root, "race"));
    const flipper = spawn(
      "bash",
      [
        "-c",
        `cd '${ws.root}/race'; while :; do echo MARK plain > a; mv -T a victim; ln -sfn '${outside.root}/secret.txt' b; mv -T b victim; done`,
      ],
      { stdio: "ignore", detached: true },
    );
    try {
      let plain = 0;
      for (let call = 0; call < 120; call++) {
        const text = resultText(
          await callTool(grep, { pattern: "MARK", path: "race", output_mode: "content" }, ws.context()),
        );
        expect(text).not.toContain("RACE-SECRET");
        if (text.includes("MARK plain")) plain++;
      }
      // The race really ran: some searches found the plain file.
      expect(plain).toBeGreaterThan(0);
    } finally {
      if (flipper.pid !== undefined) process.kill(-flipper.pid, "SIGKILL");
    }
  });
});
