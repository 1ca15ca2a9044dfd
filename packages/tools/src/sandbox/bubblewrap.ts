import { spawnSync } from "node:child_process";
import { findExecutable } from "../find-executable.js";

/** `sandbox` in settings and `--sandbox` (R-S6). */
export type SandboxMode = "auto" | "on" | "off";
export const SANDBOX_MODES = ["auto", "on", "off"] as const;

export interface SandboxPolicy {
  /** Resolved: `on` runs every Bash call in bubblewrap, `off` runs it directly. */
  readonly enabled: boolean;
  /** Network namespace shared with the host; off by default. */
  readonly network?: boolean;
  /** The bwrap binary (default: found on PATH). */
  readonly bwrap?: string;
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

/**
 * bubblewrap's arguments for one Bash call (R-S6): the whole file system read-only, the
 * workspace roots writable, a fresh /tmp, fresh /proc and /dev, every namespace unshared (so no
 * network but loopback of its own unless `network`), and the sandbox dies with the call:
 * `--die-with-parent` plus a PID namespace, so killing bwrap (the call's process group leader)
 * ends every process inside, also those that left the group with setsid.
 */
export function sandboxArgs(options: {
  readonly roots: readonly string[];
  readonly cwd: string;
  readonly network: boolean;
}): string[] {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
  for (const root of options.roots) args.push("--bind", root, root);
  args.push("--unshare-all");
  if (options.network) args.push("--share-net");
  args.push("--die-with-parent", "--chdir", options.cwd, "--");
  return args;
}
