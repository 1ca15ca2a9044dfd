import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";
import { basename } from "node:path";
import { z } from "zod";

/**
 * Who holds a lock (R-R5): enough to tell, from another process, whether that owner still runs.
 * A pid alone cannot: pids are reused (after a reboot, or once they wrap), and a lock naming a
 * live pid that is not the owner any more must not be refused for ever.
 */
export const lockOwnerSchema = z.object({
  /** Unique per lock instance: a takeover claims this one instance, never whatever holds the name now. */
  instance: z.string().min(1),
  pid: z.number().int().positive(),
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot): a reused pid has another. Null off Linux. */
  startTime: z.string().nullable(),
  host: z.string(),
  /** /proc/sys/kernel/random/boot_id: an owner from an earlier boot is dead. */
  bootId: z.string().nullable(),
  /** /proc/self/ns/pid: pids of another namespace (a container) cannot be checked from here. */
  pidNamespace: z.string().nullable(),
  since: z.string(),
  /** What the owner runs, for the message a second process prints (`forkloop batch --resume b-1`). */
  command: z.string(),
});
export type LockOwner = z.infer<typeof lockOwnerSchema>;

/** Whether a lock's owner still holds it, as far as this process can tell. */
export type OwnerVerdict =
  | { readonly state: "alive" }
  | { readonly state: "dead"; readonly why: string }
  /** On another host or in another pid namespace: its liveness cannot be checked from here. */
  | { readonly state: "unknowable"; readonly where: string };

/** The facts about processes a verdict needs; the default reads /proc (tests give their own). */
export interface ProcessProbe {
  /** This process's identity, minus the lock-specific fields. */
  self(): Omit<LockOwner, "instance" | "since" | "command">;
  /** The start time of a running process, "gone" when none has that pid, or null when unknown (no /proc). */
  startTimeOf(pid: number): string | "gone" | null;
  /** The program a running process runs (argv joined), or null when it cannot be read. */
  commandOf(pid: number): string | null;
}

/** /proc/<pid>/stat: the fields after the command name (which may hold spaces and parentheses). */
function statFields(pid: number | "self"): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

function readOrNull(read: () => string): string | null {
  try {
    return read().trim();
  } catch {
    return null;
  }
}

export const procProbe: ProcessProbe = {
  self: () => ({
    pid: process.pid,
    // Index 19 after the name is field 22, starttime (proc(5)).
    startTime: statFields("self")?.[19] ?? null,
    host: hostname(),
    bootId: readOrNull(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8")),
    pidNamespace: readOrNull(() => readlinkSync("/proc/self/ns/pid")),
  }),
  startTimeOf(pid) {
    const fields = statFields(pid);
    if (fields !== undefined) {
      // A zombie has exited: it holds nothing any more, whoever has yet to reap it.
      return fields[0] === "Z" ? "gone" : (fields[19] ?? null);
    }
    try {
      process.kill(pid, 0);
      return null; // running, but no /proc to compare start times (not Linux)
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EPERM" ? null : "gone";
    }
  },
  commandOf: (pid) => readOrNull(() => readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")),
};

/** What a forkloop process looks like in `ps`: node running forkloop's entry, or a bundled binary. */
const FORKLOOP_COMMAND = /forkloop|node/i;

/**
 * R-R5: an owner is dead when this host can prove it — same host and boot and pid namespace, and
 * its pid is gone or now belongs to a process that started at another time (pid reuse, whatever
 * that process is). An earlier boot's owner is dead. Another host's is unknowable: refused.
 */
export function judgeOwner(owner: LockOwner, probe: ProcessProbe = procProbe): OwnerVerdict {
  const self = probe.self();
  if (owner.host !== self.host) return { state: "unknowable", where: `on host ${owner.host}` };
  if (owner.bootId !== null && self.bootId !== null && owner.bootId !== self.bootId) {
    return { state: "dead", why: "it ran before this host's last boot" };
  }
  if (owner.pidNamespace !== null && self.pidNamespace !== null && owner.pidNamespace !== self.pidNamespace) {
    return { state: "unknowable", where: `in another pid namespace (${owner.pidNamespace}, a container?)` };
  }
  const running = probe.startTimeOf(owner.pid);
  if (running === "gone") return { state: "dead", why: `process ${owner.pid} is gone` };
  if (running !== null && owner.startTime !== null && running !== owner.startTime) {
    return { state: "dead", why: `pid ${owner.pid} now belongs to another process` };
  }
  if (owner.startTime === null) {
    // A lock without a start time (an older forkloop's, or written off Linux): a live pid that
    // is not forkloop at all was reused, and must not be mistaken for the owner.
    const command = probe.commandOf(owner.pid);
    if (command !== null && !FORKLOOP_COMMAND.test(command)) {
      return { state: "dead", why: `pid ${owner.pid} now runs ${command.slice(0, 60)}, not forkloop` };
    }
  }
  return { state: "alive" };
}

/**
 * This process's command line as a second process is shown it: `forkloop run --resume …` for the
 * CLI (whose entry is `…/cli/dist/main.js` or the `forkloop` bin), the script's name otherwise.
 */
export function processCommand(argv: readonly string[] = process.argv): string {
  const [, script = "node", ...args] = argv;
  const program = /(?:cli[/\\]dist[/\\]main|forkloop)(?:\.js)?$/.test(script) ? "forkloop" : basename(script);
  const text = [program, ...args].join(" ");
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}
