import { randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * What a command starts carries two marks of its call, so that what escaped the call's
 * process group (`setsid`, a double fork, `nohup … &`) can still be found in /proc and ended:
 * an environment variable, and an inherited descriptor on a file of its own. Every descendant
 * inherits both unless it scrubs its environment (`env -i`) AND closes the descriptor — what a
 * daemon asked to start a process does (`systemd-run`, `at`, an ssh to this host): those are
 * out of reach, as is everything when the forkloop process itself is SIGKILLed. Linux only
 * (without /proc nothing is found). Node cannot make itself a child subreaper (prctl), and a
 * cgroup or a PID namespace needs privileges an unsandboxed call does not have (the sandboxed
 * path has bwrap's PID namespace and --die-with-parent, R-S6).
 */
const PROCESS_MARK_VARIABLE = "FORKLOOP_PROCESS_MARK";

/** Time what escaped gets between SIGTERM and SIGKILL (as the process group does). */
const SWEEP_GRACE_MS = 500;
/** Rounds of SIGKILL after the grace: a process forking as fast as it is killed is not followed forever. */
const SWEEP_KILL_ROUNDS = 20;

export interface ProcessMark {
  /** Added to the command's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** To pass as the child's fd 3 (`stdio[3]`); close it with `release()` once spawned. */
  readonly fd: number;
  /**
   * Closes this process's copy of the descriptor (the child keeps its own) once `pid`, the
   * command's root process, is spawned: only processes started since then are looked at.
   */
  release(pid: number | undefined): void;
  /** The pids (other than this process) that carry either mark, from /proc. */
  holders(): number[];
}

let markDir: string | undefined;
let counter = 0;
const live = new Set<ProcessMark>();

/** A new pair of marks for one command. */
export function createProcessMark(): ProcessMark {
  markDir ??= mkdtempSync(join(tmpdir(), "forkloop-marks-"));
  const id = `${process.pid}-${++counter}-${randomBytes(6).toString("hex")}`;
  const path = join(markDir, id);
  const fd = openSync(path, "w");
  // Nothing stays on disk: the descriptor still names the file, as "<path> (deleted)".
  rmSync(path, { force: true });
  let open = true;
  let since = 0;
  const entry = `${PROCESS_MARK_VARIABLE}=${id}`;
  const mark: ProcessMark = {
    env: { [PROCESS_MARK_VARIABLE]: id },
    fd,
    release(pid) {
      if (!open) return;
      open = false;
      closeSync(fd);
      // The child cannot be reaped before a later turn of the event loop: its /proc entry is there.
      since = pid === undefined ? 0 : (startTime(pid) ?? 0);
    },
    holders: () => findHolders(entry, path, since),
  };
  live.add(mark);
  watchExit();
  return mark;
}

/**
 * Ends every process that carries `mark`: SIGTERM, a grace, then SIGKILL until none is left.
 * Resolves once nothing with the mark is alive (or the kill rounds are spent).
 */
export async function endMarked(mark: ProcessMark): Promise<void> {
  try {
    const first = mark.holders();
    if (first.length === 0) return;
    signalAll(first, "SIGTERM");
    await sleep(SWEEP_GRACE_MS);
    for (let round = 0; round < SWEEP_KILL_ROUNDS; round++) {
      const left = mark.holders();
      if (left.length === 0) return;
      signalAll(left, "SIGKILL");
      await sleep(10);
    }
  } finally {
    live.delete(mark);
  }
}

/** The session closes (the process exits) while commands run: what they started ends with it. */
let watching = false;
function watchExit(): void {
  if (watching) return;
  watching = true;
  process.once("exit", () => {
    for (const mark of live) {
      for (let round = 0; round < SWEEP_KILL_ROUNDS; round++) {
        const left = mark.holders();
        if (left.length === 0) break;
        signalAll(left, "SIGKILL");
      }
    }
    if (markDir) rmSync(markDir, { recursive: true, force: true });
  });
}

function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // ESRCH: gone already; EPERM: another user's (it cannot carry our marks by inheritance).
    }
  }
}

/** Reading every process's descriptors is the slow part: a process older than the command cannot be its descendant. */
function findHolders(entry: string, path: string, since: number): number[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const holders: number[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    if ((startTime(pid) ?? 0) < since) continue;
    if (hasEnvironmentEntry(pid, entry) || holdsFile(pid, path)) holders.push(pid);
  }
  return holders;
}

/** Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot. */
function startTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // The command name (field 2) is in parentheses and may contain spaces: count after its ")".
    const value = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function hasEnvironmentEntry(pid: number, entry: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(entry);
  } catch {
    return false;
  }
}

function holdsFile(pid: number, path: string): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(path)) return true;
    } catch {
      // The descriptor closed while we looked.
    }
  }
  return false;
}
