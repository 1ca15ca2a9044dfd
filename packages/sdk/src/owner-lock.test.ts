import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { judgeOwner, type LockOwner, type ProcessProbe, procProbe } from "./lock-owner.js";
import { acquireOwnerLock, LockHeldError, readLockFile } from "./owner-lock.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "forkloop-owner-lock-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const self = procProbe.self();
const owner = (fields: Partial<LockOwner>): LockOwner => ({
  instance: "i-1",
  ...self,
  since: "2025-01-01T00:00:00.000Z",
  command: "forkloop batch --resume b-1",
  ...fields,
});
/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(child.stdout.toString());
}
const options = { what: "batch b-1", command: "forkloop batch --resume b-1" };

describe("R-R5: a lock owner's verdict", () => {
  const here = { pid: 1000, startTime: "10", host: "h", bootId: "boot-1", pidNamespace: "pid:[9]" };
  const probe = (running: Record<number, string | null>, command = "node forkloop"): ProcessProbe => ({
    self: () => here,
    startTimeOf: (pid) => (pid in running ? (running[pid] ?? null) : "gone"),
    commandOf: () => command,
  });
  const at = (fields: Partial<LockOwner>) => owner({ ...here, pid: 7, startTime: "55", ...fields });
  it.each([
    ["the same process start", "alive", at({}), { 7: "55" }],
    ["its pid gone", "dead", at({}), {}],
    ["its pid reused by a process started later", "dead", at({}), { 7: "99" }],
    ["an earlier boot", "dead", at({ bootId: "boot-0" }), { 7: "55" }],
    ["another host", "unknowable", at({ host: "elsewhere" }), { 7: "55" }],
    ["another pid namespace", "unknowable", at({ pidNamespace: "pid:[1]" }), { 7: "55" }],
  ] as const)("%s → %s", (_name, state, lockOwner, running) => {
    expect(judgeOwner(lockOwner, probe(running)).state).toBe(state);
  });
  it("a lock without a start time (an older forkloop's) naming a live pid that is not forkloop → dead", () => {
    const legacy = at({ startTime: null });
    expect(judgeOwner(legacy, probe({ 7: null }, "/usr/sbin/sshd -D")).state).toBe("dead");
    expect(judgeOwner(legacy, probe({ 7: null }, "node /usr/bin/forkloop batch")).state).toBe("alive");
  });
});

describe("R-R5: acquireOwnerLock on real files", () => {
  it("creates the lock whole, with the owner's pid, start time, host and boot id; release removes it", async () => {
    const path = join(dir, "lock");
    const lock = await acquireOwnerLock(path, options);
    const written = JSON.parse(readFileSync(path, "utf8")) as LockOwner;
    expect(written).toMatchObject({ pid: process.pid, host: hostname(), command: options.command });
    expect(written.startTime).toBe(self.startTime);
    expect(written.bootId).toBe(self.bootId);
    expect(readdirSync(dir)).toEqual(["lock"]); // no temporary left beside it
    await lock.release();
    expect(existsSync(path)).toBe(false);
  });

  it("R-R5, R-V3: temporaries of processes killed mid-way are removed at the directory's first lock (a live owner's, a claim and other files stay), and the directory is listed once per process", async () => {
    const uuid = (n: number) => `0000000${n}-0000-4000-8000-000000000000`;
    const dead = owner({ instance: "dead", pid: deadPid() });
    writeFileSync(join(dir, `other.lock.${uuid(1)}.tmp`), JSON.stringify(dead));
    writeFileSync(join(dir, `other.lock.${uuid(2)}.tmp`), JSON.stringify(owner({ instance: "live" })));
    writeFileSync(join(dir, `other.lock.takeover-x.${uuid(3)}.tmp`), JSON.stringify(dead));
    writeFileSync(join(dir, "journal.tmp"), JSON.stringify(dead));
    const first = await acquireOwnerLock(join(dir, "lock"), options);
    expect(readdirSync(dir).sort()).toEqual(
      ["journal.tmp", "lock", `other.lock.${uuid(2)}.tmp`, `other.lock.takeover-x.${uuid(3)}.tmp`].sort(),
    );
    // Swept once: a leftover that appears later waits for the next process.
    writeFileSync(join(dir, `lock-2.${uuid(4)}.tmp`), JSON.stringify(dead));
    const second = await acquireOwnerLock(join(dir, "lock-2"), options);
    expect(readdirSync(dir)).toContain(`lock-2.${uuid(4)}.tmp`);
    await first.release();
    await second.release();
  });

  it("a live owner is refused with its pid, host, start and command, and the fix", async () => {
    const path = join(dir, "lock");
    const lock = await acquireOwnerLock(path, options);
    const live = owner({
      instance: "other",
      pid: process.ppid,
      startTime: procProbe.startTimeOf(process.ppid) as string,
    });
    writeFileSync(path, JSON.stringify(live));
    const refused = await acquireOwnerLock(path, options).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LockHeldError);
    expect((refused as Error).message).toBe(
      `batch b-1 is in use by process ${process.ppid} on ${hostname()} since 2025-01-01T00:00:00.000Z (forkloop batch --resume b-1). Wait for it to finish, or stop it (kill ${process.ppid}) and run the command again.`,
    );
    await lock.release(); // not ours any more: left alone
    expect(existsSync(path)).toBe(true);
  });

  it("the same process asking twice is refused (two sessions of one program)", async () => {
    const path = join(dir, "lock");
    await acquireOwnerLock(path, options);
    await expect(acquireOwnerLock(path, options)).rejects.toThrow(/in use by this process/);
  });

  it("another host's lock is refused, naming the host and the file to delete", async () => {
    const path = join(dir, "lock");
    writeFileSync(path, JSON.stringify(owner({ host: "build-7", pid: deadPid() })));
    await expect(acquireOwnerLock(path, options)).rejects.toThrow(
      `on host build-7, which this host cannot check. If it no longer runs there, delete ${path}`,
    );
  });

  it.each([
    ["a dead pid", () => JSON.stringify(owner({ pid: deadPid() }))],
    [
      "a live pid that started at another time (pid reuse)",
      () => JSON.stringify(owner({ pid: process.ppid, startTime: "1" })),
    ],
    ["an earlier boot", () => JSON.stringify(owner({ pid: process.ppid, bootId: "another-boot" }))],
    ["an older forkloop's bare dead pid", () => `${deadPid()}\n`],
    ["an empty file", () => ""],
  ])("a lock of %s is taken over, said once", async (_name, contents) => {
    const path = join(dir, "lock");
    writeFileSync(path, contents());
    const lock = await acquireOwnerLock(path, options);
    expect(lock.tookOver).toMatch(/^batch b-1: took over the lock of process \d+/);
    expect((await readLockFile(path))?.owner.instance).toBe(lock.owner.instance);
    expect(readdirSync(dir)).toEqual(["lock"]);
  });

  it("a takeover claim left by a taker that died is itself taken over", async () => {
    const path = join(dir, "lock");
    const stale = owner({ instance: "stale", pid: deadPid() });
    writeFileSync(path, JSON.stringify(stale));
    writeFileSync(
      `${path}.takeover-stale`,
      JSON.stringify(owner({ instance: "dead-taker", pid: deadPid() })),
    );
    const lock = await acquireOwnerLock(path, options);
    expect((await readLockFile(path))?.owner.instance).toBe(lock.owner.instance);
  });

  it("a live taker's claim makes the others wait, then see the lock taken", async () => {
    const path = join(dir, "lock");
    writeFileSync(path, JSON.stringify(owner({ instance: "stale", pid: deadPid() })));
    const live = owner({
      instance: "taker",
      pid: process.ppid,
      startTime: procProbe.startTimeOf(process.ppid) as string,
    });
    writeFileSync(`${path}.takeover-stale`, JSON.stringify(live));
    const waiting = acquireOwnerLock(path, options);
    // The live taker finishes: its lock replaces the stale one, its claim goes.
    await new Promise((resolve) => setTimeout(resolve, 30));
    writeFileSync(path, JSON.stringify(live));
    rmSync(`${path}.takeover-stale`);
    await expect(waiting).rejects.toThrow(LockHeldError);
  });
});
