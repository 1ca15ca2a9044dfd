import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, sessionsStateDir, startCliInProcess, streamJsonLines } from "@forkloop/cli/testing";
import { lockSession } from "@forkloop/sdk";
import { type HeldLock, LockHeldError } from "@forkloop/sdk/owner-lock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/**
 * R-R5: `forkloop run --resume S --repair` holds the session's lock from before the repair to the
 * end of the run. A racer tries to take the lock the moment the repair is reported, and keeps
 * trying until the run ends: with the repair under a lock of its own (released before query()
 * takes the session again) the racer gets the session in between and the run exits 2; under the
 * run's one lock it never does. The run releases the lock when its work ends, which may come before
 * the CLI has written the result line, so a racer that gets the lock must find the transcript as
 * the run leaves it.
 */
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-repair-lock-"));
  await mkdir(join(dir, "src"));
  await writeFile(join(dir, "src", "a.ts"), "export const a = 1;\n");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * Takes the session's lock as soon as it is free, until `stop` is set; the lock when it got one,
 * with the transcript's size at that moment.
 */
async function racer(
  sessionsDir: string,
  id: string,
  stop: { done: boolean },
): Promise<{ lock: HeldLock; transcriptBytes: number } | undefined> {
  while (!stop.done) {
    try {
      const lock = await lockSession(sessionsDir, id);
      return { lock, transcriptBytes: (await stat(join(sessionsDir, `${id}.fltr`))).size };
    } catch (error) {
      if (!(error instanceof LockHeldError)) throw error;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return undefined;
}

describe("R-R5: --repair and the run are one hold of the session's lock", () => {
  it("R-R5: a racer that tries the session's lock from the moment the repair is reported until the run ends never gets it, and the repaired run finishes", async () => {
    const first = await runCliInProcess(["run", "Summarize src/a.ts", "--output-format", "stream-json"], {
      cwd: dir,
    });
    expect(first.code, first.stderr).toBe(0);
    const id = String(streamJsonLines(first.stdout).at(-1)?.session_id);
    const sessionsDir = sessionsStateDir(dir);
    const path = join(sessionsDir, `${id}.fltr`);
    const bytes = await readFile(path);
    const at = Math.floor(bytes.length / 2);
    bytes[at] = (bytes[at] ?? 0) ^ 0x20;
    await writeFile(path, bytes);

    const run = startCliInProcess(
      ["run", "--resume", id, "--repair", "And now a.ts again", "--output-format", "stream-json"],
      { cwd: dir },
    );
    await run.waitFor(run.stderr, (text) => text.includes("forkloop: repaired"));
    const stop = { done: false };
    const raced = racer(sessionsDir, id, stop);
    // The racer stops at the run's result line: a racer that took the lock after it proves nothing.
    // One that holds the lock before the run takes it again makes the run exit 2.
    const ended = run
      .waitFor(run.stdout, (text) => text.includes('"type":"result"'))
      .catch(() => undefined)
      .then(() => {
        stop.done = true;
      });
    const result = await run.exited;
    stop.done = true;
    await ended;
    const got = await raced;
    await got?.lock.release();
    // A racer that got the session got it after the run had written all of its records.
    const finalBytes = (await stat(path)).size;
    expect(
      got?.transcriptBytes ?? finalBytes,
      "the racer took the session between the repair and the run",
    ).toBe(finalBytes);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /repaired .*: kept its \d+ intact records; the damaged file is .*\.damaged-/,
    );
    expect(streamJsonLines(result.stdout).at(-1)).toMatchObject({ type: "result", subtype: "success" });
  });
});
