import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  callTool,
  createTempWorkspace,
  resultText,
  type TempWorkspace,
  useTempWorkspace,
} from "../testing/index.js";
import { readTool } from "./read.js";

const ws = useTempWorkspace();
let outside: TempWorkspace;
beforeEach(() => {
  outside = createTempWorkspace("forkloop-read-outside-");
});
afterEach(() => outside.cleanup());

describe("R-S4: Read opens once (no check-then-open race)", () => {
  it("R-S4: Reads while a hostile process flips the file, and a directory on its real path, between plain and symlinks to outside leak nothing", async () => {
    writeFileSync(join(outside.root, "secret.txt"), "RACE-SECRET\n");
    mkdirSync(join(outside.root, "dir"));
    writeFileSync(join(outside.root, "dir/victim"), "RACE-SECRET in a directory\n");
    mkdirSync(join(ws.root, "race"));
    mkdirSync(join(ws.root, "d1"));
    writeFileSync(join(ws.root, "d1/victim"), "plain\n");
    // race/victim flips between a file and a symlink to the secret; d1 (a directory on the real
    // path the confinement check returns) between itself and a symlink to an outside directory.
    const script = [
      `cd '${ws.root}'`,
      `while :; do echo plain > race/a; mv -T race/a race/victim; ln -sfn '${outside.root}/secret.txt' race/b; mv -T race/b race/victim`,
      `mv -T d1 d1.x; ln -s '${outside.root}/dir' d1; rm d1; mv -T d1.x d1; done`,
    ].join("; ");
    const flipper = spawn("bash", ["-c", script], { stdio: "ignore", detached: true });
    try {
      // 3,000 rounds: the old check-then-open Read leaked ~1 in 1,000 reads here (4-10 per run).
      const plain = { "race/victim": 0, "d1/victim": 0 };
      for (let call = 0; call < 3000; call++) {
        for (const file_path of ["race/victim", "d1/victim"] as const) {
          const text = resultText(await callTool(readTool, { file_path }, ws.context()));
          expect(text, file_path).not.toContain("RACE-SECRET");
          if (text.includes("plain")) plain[file_path]++;
        }
      }
      // The race really ran: reads found the plain files while they flipped.
      expect(plain["race/victim"]).toBeGreaterThanOrEqual(20);
      expect(plain["d1/victim"]).toBeGreaterThanOrEqual(20);
    } finally {
      if (flipper.pid !== undefined) process.kill(-flipper.pid, "SIGKILL");
    }
  });
});
