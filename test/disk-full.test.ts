import { execFile } from "node:child_process";
import { writeSync } from "node:fs";
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { encodeRecord, openLocalJournalBackend, readJournal } from "@forkloop/batch";
import {
  batchStateDir,
  runCliInProcess,
  sessionsStateDir,
  startCliInProcess,
  streamJsonLines,
} from "@forkloop/cli/testing";
import { loadTranscript, TranscriptWriter } from "@forkloop/orchestrator";
import { startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);

/**
 * R-R4 disk-full and read-only tests. Each mounts a small tmpfs of its own (root only); where
 * mounting is not allowed the same properties are checked in-process with an injected ENOSPC —
 * each test prints which of the two ran.
 */
interface SmallDisk {
  readonly dir: string;
  /** Leaves about `freeBytes` free by writing a filler file. */
  fill(freeBytes: number): Promise<void>;
  unfill(): Promise<void>;
  remount(options: "ro" | "rw"): Promise<void>;
}

let root: string;
const mounted: string[] = [];
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "forkloop-disk-"));
});
afterAll(async () => {
  for (const dir of mounted) await run("umount", [dir]).catch(() => {});
  await rm(root, { recursive: true, force: true });
});

async function smallDisk(name: string, sizeKiB: number): Promise<SmallDisk | undefined> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  try {
    // FORKLOOP_TEST_NO_TMPFS=1 runs the fallback on a machine that could mount.
    if (process.env.FORKLOOP_TEST_NO_TMPFS === "1") throw new Error("FORKLOOP_TEST_NO_TMPFS=1");
    await run("mount", ["-t", "tmpfs", "-o", `size=${sizeKiB}k`, "tmpfs", dir]);
  } catch (error) {
    console.log(`${name}: no tmpfs (${(error as Error).message.split("\n")[0]}): injected ENOSPC instead`);
    return undefined;
  }
  mounted.push(dir);
  console.log(`${name}: on a ${sizeKiB} KiB tmpfs`);
  const filler = join(dir, "filler");
  return {
    dir,
    async fill(freeBytes) {
      const { stdout } = await run("df", ["-B1", "--output=avail", dir]);
      const available = Number(stdout.trim().split("\n").at(-1));
      // Something else may be writing meanwhile: a fill that runs out of room has done its job.
      await writeFile(filler, Buffer.alloc(Math.max(0, available - freeBytes))).catch((error) => {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      });
    },
    unfill: () => rm(filler, { force: true }),
    async remount(mode) {
      await run("mount", ["-o", `remount,${mode}`, dir]);
    },
  };
}

/** A FileHandle-like wrapper whose writes fail with ENOSPC after `okBytes` bytes. */
function failingOpen(okBytes: number) {
  return async (path: string, flags: "a") => {
    const handle = await open(path, flags);
    let budget = okBytes;
    return new Proxy(handle, {
      get(target, key) {
        if (key === "write") {
          return async (buffer: Buffer, offset: number, length: number) => {
            const take = Math.min(length, Math.max(0, budget));
            budget -= take;
            if (take === 0)
              throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
            return target.write(buffer, offset, take); // a short write, then the failure
          };
        }
        const value = Reflect.get(target, key);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };
}

const noStack = (stderr: string) => expect(stderr).not.toMatch(/unexpected error|\n\s+at /);

async function writeSources(cwd: string, count: number): Promise<void> {
  await mkdir(join(cwd, "src"), { recursive: true });
  for (let index = 0; index < count; index++) {
    await writeFile(
      join(cwd, "src", `f${String(index).padStart(2, "0")}.ts`),
      `export const f${index} = ${index};\n`,
    );
  }
}

describe("R-R4: a full disk never acknowledges what is not on disk", () => {
  it("the batch journal: ENOSPC mid-run stops the batch (exit 2, a message); after space returns, resume loses and repeats nothing", async () => {
    const disk = await smallDisk("journal", 8 * 1024);
    if (!disk) {
      const dir = await mkdtemp(join(tmpdir(), "forkloop-journal-enospc-"));
      const items = Array.from({ length: 6 }, (_, index) => ({
        id: `i${index}`,
        label: `i${index}`,
        prompt: "p",
      }));
      // Room for the first three enqueue records and 10 bytes of the fourth.
      const at = new Date().toISOString();
      const room = items
        .slice(0, 3)
        .reduce((sum, item) => sum + encodeRecord({ type: "enqueued", at, item }).length, 10);
      const backend = await openLocalJournalBackend({ dir, openFile: failingOpen(room) });
      await backend.enqueue(items.slice(0, 3));
      await expect(backend.enqueue(items.slice(3))).rejects.toMatchObject({
        name: "LogWriteError",
        code: "ENOSPC",
      });
      await expect(backend.claim("w")).rejects.toMatchObject({ code: "ENOSPC" }); // every later append too
      await backend.close();
      const { records, contents } = await readJournal(dir);
      expect(contents.damage).toBeUndefined();
      expect(contents.tornTail).toBe(false); // the short write was cut back off
      expect(records.map((record) => record.type)).toEqual(["enqueued", "enqueued", "enqueued"]);
      await rm(dir, { recursive: true, force: true });
      return;
    }
    const cwd = disk.dir;
    await writeSources(cwd, 12);
    const first = startCliInProcess(
      [
        "batch",
        "--files",
        "src/*.ts",
        "--prompt",
        "Summarize {{file}}",
        "--concurrency",
        "2",
        "--id",
        "full",
      ],
      { cwd, env: { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=30" } },
    );
    await first.waitFor(first.stderr, (text) => (text.match(/^ok /gm) ?? []).length >= 2);
    await disk.fill(0);
    const stopped = await first.exited;
    expect(stopped.code).toBe(2);
    expect(stopped.stderr).toMatch(/no space left on the device \(ENOSPC\)/);
    expect(stopped.stderr).toContain("forkloop batch --resume full");
    noStack(stopped.stderr);
    const batchDir = batchStateDir(cwd, "full");
    await disk.unfill();
    const before = await readJournal(batchDir);
    expect(before.contents.damage).toBeUndefined();
    // Every item the run said was done is in the journal.
    const said = (stopped.stderr.match(/^ok +src\/\S+/gm) ?? []).length;
    expect(before.records.filter((record) => record.type === "completed").length).toBeGreaterThanOrEqual(
      said,
    );

    // --retry-failed: an item whose transcript write failed on the full disk was recorded failed.
    const resumed = await runCliInProcess(["batch", "--resume", "full", "--retry-failed"], { cwd });
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = await readJournal(batchDir);
    const completed = after.records.flatMap((record) => (record.type === "completed" ? [record.id] : []));
    expect(completed).toHaveLength(12);
    expect(new Set(completed).size).toBe(12);
  });

  it("a session transcript: ENOSPC is a message (exit 2), the file is cut back to whole records", async () => {
    const disk = await smallDisk("transcript", 4 * 1024);
    if (!disk) {
      const dir = await mkdtemp(join(tmpdir(), "forkloop-transcript-enospc-"));
      const path = join(dir, "s.fltr");
      let budget = 300;
      const writer = new TranscriptWriter(path, {
        writeSync: (fd, buffer, offset) => {
          const take = Math.min(buffer.length - offset, budget);
          budget -= take;
          if (take <= 0)
            throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
          return writeSync(fd, buffer, offset, take);
        },
      });
      const message = (index: number) =>
        ({
          type: "user",
          uuid: `u${index}`,
          parentUuid: null,
          timestamp: "",
          message: { role: "user", content: "x".repeat(100) },
        }) as never;
      writer.append({ type: "message", message: message(0) });
      expect(() => writer.append({ type: "message", message: message(1) })).toThrow(
        /cannot write the transcript/,
      );
      writer.close();
      const loaded = await loadTranscript(path);
      expect(loaded).toMatchObject({ torn: false });
      expect(loaded.messages).toHaveLength(1);
      await rm(dir, { recursive: true, force: true });
      return;
    }
    const cwd = disk.dir;
    await writeSources(cwd, 1);
    const first = await runCliInProcess(["run", "Summarize src/f00.ts", "--output-format", "stream-json"], {
      cwd,
    });
    expect(first.code, first.stderr).toBe(0);
    const id = String(streamJsonLines(first.stdout).at(-1)?.session_id);
    const path = join(sessionsStateDir(cwd), `${id}.fltr`);
    const bytes = await readFile(path);
    // No room at all: the session's lock (R-R5) is the first write, and it is named.
    await disk.fill(0);
    const noLock = await runCliInProcess(
      ["run", "--resume", id, "Carry on.", "--output-format", "stream-json"],
      {
        cwd,
      },
    );
    expect(noLock.code).toBe(2);
    expect(noLock.stderr).toMatch(
      /cannot write .*\.lock\.[^ ]*\.tmp: no space left on the device \(ENOSPC\)/,
    );
    noStack(noLock.stderr);
    expect(await readFile(path)).toEqual(bytes);
    await disk.unfill();
    // Room for the lock but not for the 20,000-character turn: the transcript write fails.
    await disk.fill(12 * 1024);
    const full = await runCliInProcess(
      ["run", "--resume", id, "x".repeat(20_000), "--output-format", "stream-json"],
      {
        cwd,
      },
    );
    expect(full.code).toBe(2);
    expect(full.stderr).toMatch(/cannot write .*\.fltr: no space left on the device \(ENOSPC\)/);
    expect(full.stderr).toContain(`forkloop run --resume ${id}`);
    noStack(full.stderr);
    expect(full.stdout).not.toContain('"type":"result"');
    await disk.unfill();
    expect(await readFile(path)).toEqual(bytes); // the failed record was cut back off
    const again = await runCliInProcess(["run", "--resume", id, "Carry on."], { cwd });
    expect(again.code, again.stderr).toBe(0);
  });

  it("the report and state directories: no room or read-only fails before the first request", async () => {
    const disk = await smallDisk("report", 1024);
    const server = await startSimulator();
    const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url };
    try {
      const cwd = await mkdtemp(join(tmpdir(), "forkloop-report-"));
      await writeSources(cwd, 3);
      if (!disk) {
        // Without a mount: an output directory that is not writable (a file stands in the way).
        await writeFile(join(cwd, "out"), "");
        const blocked = await runCliInProcess(
          ["batch", "--files", "src/*.ts", "--prompt", "p {{file}}", "--output", "out/x"],
          { cwd, env },
        );
        expect(blocked.code).toBe(2);
        expect(blocked.stderr).toMatch(/cannot write the output directory .*out\/x/);
        noStack(blocked.stderr);
      } else {
        await disk.fill(64 * 1024);
        const noRoom = await runCliInProcess(
          ["batch", "--files", "src/*.ts", "--prompt", "p {{file}}", "--output", disk.dir],
          { cwd, env },
        );
        expect(noRoom.code).toBe(2);
        expect(noRoom.stderr).toMatch(
          /the output directory .* has \d+ KiB free, and about [\d.]+ MiB will be written there/,
        );
        noStack(noRoom.stderr);
        await disk.unfill();
        await writeSources(disk.dir, 3);
        await disk.remount("ro");
        const readOnly = await runCliInProcess(
          ["batch", "--files", "src/*.ts", "--prompt", "p {{file}}", "--output", join(disk.dir, "r")],
          { cwd, env },
        );
        expect(readOnly.code).toBe(2);
        expect(readOnly.stderr).toMatch(/read-only \(EROFS\)/);
        noStack(readOnly.stderr);
        const stateReadOnly = await runCliInProcess(
          ["batch", "--files", "src/*.ts", "--prompt", "p {{file}}"],
          {
            cwd: disk.dir,
            env,
          },
        );
        expect(stateReadOnly.code).toBe(2);
        expect(stateReadOnly.stderr).toMatch(/read-only \(EROFS\)/);
        noStack(stateReadOnly.stderr);
        await disk.remount("rw");
      }
      expect(server.requests()).toHaveLength(0);
      await rm(cwd, { recursive: true, force: true });
    } finally {
      await server.close();
    }
  });
});
