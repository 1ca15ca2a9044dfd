import { spawnSync } from "node:child_process";
import { findExecutable } from "../find-executable.js";

/** `sandbox` in settings and `--sandbox` (R-S6). */
export type SandboxMode = "auto" | "on" | "off";

/** Tasks (processes and threads) one sandboxed call may run at once, unless the policy says otherwise. */
export const SANDBOX_PROCESS_LIMIT = 4096;

export interface SandboxPolicy {
  /** Resolved: `on` runs every Bash call in bubblewrap, `off` runs it directly. */
  readonly enabled: boolean;
  /**
   * Network namespace shared with the host; off by default. Either way unix sockets cannot be
   * created inside (unix-socket-filter.ts).
   */
  readonly network?: boolean;
  /** The bwrap binary (default: found on PATH). */
  readonly bwrap?: string;
  /** RLIMIT_NPROC inside the sandbox (default SANDBOX_PROCESS_LIMIT); the kernel exempts root from it. */
  readonly processLimit?: number;
  /**
   * The session's user home (its `HOME`, which a program's `query()` or an in-process run may set
   * apart from this process's): its settings, git config and shell files stay read-only when it
   * lies in the workspace (R-S9). Default `os.homedir()`.
   */
  readonly home?: string;
  /**
   * The session's forkloop directory (its `FORKLOOP_HOME`, else `HOME/.forkloop`): a running call
   * records there what it may still create, so another session skips it (held-points.ts).
   */
  readonly userDir?: string;
}

export type BubblewrapProbe =
  | { readonly ok: true; readonly bwrap: string }
  | { readonly ok: false; readonly reason: string };

/** `bwrap` on PATH, if any (an executable file). */
export function findBubblewrap(path = process.env.PATH ?? ""): string | undefined {
  return findExecutable("bwrap", path);
}

/**
 * Whether bubblewrap works on this machine: found on PATH and able to start a sandbox with the
 * namespaces Bash calls use (a container without user namespaces fails here, not mid-run).
 */
export function probeBubblewrap(path = process.env.PATH ?? ""): BubblewrapProbe {
  const bwrap = findBubblewrap(path);
  if (bwrap === undefined)
    return { ok: false, reason: "bwrap is not on PATH (install the bubblewrap package)" };
  const run = spawnSync(bwrap, [...sandboxArgs({ roots: [], cwd: "/", network: false }), "true"], {
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 10_000,
    encoding: "utf8",
  });
  if (run.status === 0) return { ok: true, bwrap };
  const detail = (run.stderr ?? "").trim() || run.error?.message || `exit ${run.status ?? run.signal}`;
  return { ok: false, reason: `${bwrap} cannot start a sandbox here: ${detail}` };
}

/** What one sandboxed call gets to see and change (sandbox-plan.ts works it out per call). */
export interface SandboxPlan {
  /** Writable: the workspace roots (real paths). */
  readonly roots: readonly string[];
  readonly cwd: string;
  readonly network: boolean;
  /** Names inside the roots bound onto themselves, writable, so they cannot be renamed or removed (`.git`). */
  readonly pinned?: readonly string[];
  /** Inside the roots, read-only: what git or forkloop runs later (R-S9, execution-points.ts). */
  readonly readOnly?: readonly string[];
  /** Host unix socket files outside /tmp and /run: /dev/null is bound over each (host-sockets.ts). */
  readonly sockets?: readonly string[];
  /** Files under /run kept visible in the fresh one (where /etc/resolv.conf points). */
  readonly runFiles?: readonly string[];
  /** `/var/run` when it is a directory of its own rather than a link to /run. */
  readonly varRunDirectory?: boolean;
  readonly processLimit?: number;
  /** The descriptor bwrap reads the seccomp program from (unix-socket-filter.ts). */
  readonly seccompFd?: number;
  /**
   * A descriptor the sandbox writes one byte to, and closes, just before it runs the command: its
   * silence means bwrap failed while setting up (nothing ran), so the call may be prepared again.
   */
  readonly startedFd?: number;
}

/** The shell words that write the started byte on `fd` (a caller checks its arguments hold them). */
export function startedMarker(fd: number): string {
  return `printf s >&${Math.floor(fd)}`;
}

/**
 * bubblewrap's arguments for one Bash call, up to the command (R-S6, R-S9): the whole file system
 * read-only, fresh /dev, /proc, /tmp and /run (no host sockets there, nor X11's), the workspace
 * roots writable except their execution points, /dev/null over every other host socket file,
 * every namespace unshared (no network, and no abstract sockets of the host, unless `network`),
 * the unix-socket filter (no unix socket can be made inside), and the sandbox dies with the call:
 * `--die-with-parent` plus a PID namespace, so killing bwrap (the call's process group leader)
 * ends every process inside, also those that left the group with setsid. bwrap has no rlimit
 * option, so a shell inside sets RLIMIT_NPROC and then runs the command (`exec "$@"`).
 */
export function sandboxArgs(plan: SandboxPlan): string[] {
  const args = [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    "--tmpfs",
    "/run",
  ];
  if (plan.varRunDirectory === true) args.push("--tmpfs", "/var/run");
  for (const file of plan.runFiles ?? []) args.push("--ro-bind", file, file);
  for (const root of plan.roots) args.push("--bind", root, root);
  for (const path of plan.pinned ?? []) args.push("--bind", path, path);
  for (const path of plan.readOnly ?? []) args.push("--ro-bind", path, path);
  for (const socket of plan.sockets ?? []) args.push("--ro-bind", "/dev/null", socket);
  args.push("--unshare-all");
  if (plan.network) args.push("--share-net");
  if (plan.seccompFd !== undefined) args.push("--seccomp", String(plan.seccompFd));
  const limit = Math.floor(plan.processLimit ?? SANDBOX_PROCESS_LIMIT);
  args.push("--die-with-parent", "--chdir", plan.cwd, "--");
  // Soft first (a hard limit below the soft one is EINVAL); a hard limit lower than ours stays.
  // The started byte is written only once the sandbox is set up, and closed before the command.
  const fd = plan.startedFd === undefined ? undefined : Math.floor(plan.startedFd);
  const started = fd === undefined ? "" : `${startedMarker(fd)} || exit 125; exec ${fd}>&-; `;
  args.push(
    "bash",
    "-c",
    `ulimit -Su ${limit} 2>/dev/null; ulimit -Hu ${limit} 2>/dev/null; ${started}exec "$@"`,
    "forkloop-sandbox",
  );
  return args;
}
