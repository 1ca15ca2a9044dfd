import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { realpathAllowingMissing } from "../workspace-paths.js";

/**
 * The execution points a running sandboxed command could still create (R-S9): a missing file
 * (`.mcp.json`, `~/.claude.json` when home is the workspace) or a symlinked name. The sandbox
 * cannot hold them with a mount, and moves aside what the command put there only when the command
 * ends (sandbox-call.ts, `settle`). Until then another session started in the same workspace — a
 * second `forkloop run`, `query()`, `batch` — would read what the command just wrote. So each such
 * command leaves a record in the user's forkloop directory (`<dir>/watched/`, 0700, the record
 * 0600) naming the forkloop process that will settle it, removed once it has; session start skips
 * a file a live record names. A record whose process is gone (killed, crashed) is stale: ignored
 * and removed.
 */

/** One file or directory a running command is watched for. */
export interface HeldPoint {
  readonly path: string;
  /** For messages: what runs from it. */
  readonly what: string;
  /** The forkloop process that will settle the command. */
  readonly pid: number;
}

/** What session start asks: is this file (or a directory on its way) still held? */
export interface HeldPoints {
  /** The held point at `path` or above it, if any. */
  find(path: string): HeldPoint | undefined;
}

/** The user's forkloop directory: `FORKLOOP_HOME`, else `~/.forkloop` (the run's HOME first). */
export function forkloopUserDir(env: Readonly<Record<string, string | undefined>>): string {
  return resolve(env.FORKLOOP_HOME || join(env.HOME || homedir(), ".forkloop"));
}

const RECORD_MAX_BYTES = 1024 * 1024;

let records = 0;

/**
 * Records `points` as held by this process until the returned release is called. Best effort: a
 * directory that cannot be written costs the command nothing (its end still moves aside what it
 * made); it only leaves other sessions unwarned.
 */
export function recordHeldPoints(
  userDir: string,
  points: readonly { readonly path: string; readonly what: string }[],
): () => void {
  if (points.length === 0) return () => {};
  const dir = join(userDir, "watched");
  const name = `${process.pid}-${++records}-${Math.random().toString(36).slice(2, 10)}`;
  const file = join(dir, `${name}.json`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const record = { pid: process.pid, start: startTimeOf(process.pid), points };
    const temporary = join(dir, `${name}.tmp`);
    // Written whole, then renamed: a reader never meets half a record.
    writeFileSync(temporary, JSON.stringify(record), { mode: 0o600, flag: "wx" });
    renameSync(temporary, file);
  } catch {
    return () => {};
  }
  return () => {
    try {
      unlinkSync(file);
    } catch {
      // Already gone.
    }
  };
}

/** The points held by live forkloop processes, from the records in each of `userDirs`. */
export function heldPoints(userDirs: readonly string[]): HeldPoints {
  const held = new Map<string, HeldPoint>();
  for (const userDir of new Set(userDirs.map((dir) => resolve(dir)))) {
    const dir = join(userDir, "watched");
    let names: string[];
    try {
      names = readdirSync(dir).filter((name) => name.endsWith(".json"));
    } catch {
      continue;
    }
    for (const name of names) {
      const file = join(dir, name);
      const record = readRecord(file);
      if (record === undefined) continue;
      if (!isLive(record.pid, record.start)) {
        try {
          unlinkSync(file);
        } catch {
          // Another reader removed it first.
        }
        continue;
      }
      for (const point of record.points) {
        held.set(point.path, { path: point.path, what: point.what, pid: record.pid });
      }
    }
  }
  return {
    find(path) {
      if (held.size === 0) return undefined;
      // By name, from the file up: a replaced directory link holds every file below it. Each name
      // is also tried with its parent's real path, as the sandbox records them.
      for (let current = resolve(path); ; current = dirname(current)) {
        const found = held.get(current) ?? held.get(join(realParent(current), basename(current)));
        if (found !== undefined) return found;
        if (dirname(current) === current) return undefined;
      }
    },
  };
}

/** The one line session start says for a file it skipped because `point` holds it. */
export function heldReason(point: HeldPoint): string {
  return `a sandboxed command still running (forkloop process ${point.pid}) is watched for ${point.path} (${point.what}), and what it writes there is moved aside only when it ends`;
}

interface HeldRecord {
  readonly pid: number;
  readonly start: string | undefined;
  readonly points: readonly { readonly path: string; readonly what: string }[];
}

/** A record, read as untrusted input: one open, a regular file, size-capped; undefined if malformed. */
function readRecord(file: string): HeldRecord | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size > RECORD_MAX_BYTES) return undefined;
    const buffer = Buffer.alloc(stats.size);
    const count = readSync(fd, buffer, 0, buffer.length, 0);
    const json = JSON.parse(buffer.subarray(0, count).toString("utf8")) as Partial<HeldRecord>;
    if (!Number.isInteger(json.pid) || (json.pid as number) <= 0 || !Array.isArray(json.points))
      return undefined;
    const points = json.points.filter(
      (point): point is { path: string; what: string } =>
        typeof point?.path === "string" && typeof point?.what === "string",
    );
    return {
      pid: json.pid as number,
      start: typeof json.start === "string" ? json.start : undefined,
      points,
    };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The process runs, and is the one that wrote the record (not a later process with its pid). */
function isLive(pid: number, start: string | undefined): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return start === undefined || startTimeOf(pid) === start;
}

/** The process's start time in clock ticks since boot (`/proc/PID/stat` field 22), where known. */
function startTimeOf(pid: number): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(`/proc/${pid}/stat`, constants.O_RDONLY);
    const buffer = Buffer.alloc(4096);
    const text = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString("utf8");
    // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return fields[19];
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function realParent(path: string): string {
  const parent = realpathAllowingMissing(dirname(path));
  return parent.ok ? parent.path : dirname(path);
}
