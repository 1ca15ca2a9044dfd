import { lstatSync, mkdirSync, readlinkSync, realpathSync, renameSync, symlinkSync } from "node:fs";
import { homedir } from "node:os";
import { gitExecutionPoints } from "../git/git-execution-points.js";
import { isInside, realpathAllowingMissing } from "../workspace-paths.js";
import { type SandboxPlan, type SandboxPolicy, sandboxArgs, startedMarker } from "./bubblewrap.js";
import { type ExecutionPoint, settingsExecutionPoints } from "./execution-points.js";
import { otherHardLinks } from "./hard-links.js";
import { forkloopUserDir, recordHeldPoints } from "./held-points.js";
import { hostSocketPaths } from "./host-sockets.js";
import { watchNewRepositories } from "./new-repositories.js";
import { outsideLinks } from "./outside-links.js";
import { unixSocketFilter } from "./unix-socket-filter.js";

/** What runs one command in the sandbox, and what to check once the sandbox is gone. */
export interface SandboxCall {
  /** bwrap and its arguments, up to the command. */
  readonly launcher: readonly string[];
  /** Data for the launcher's descriptors from `firstInputFd` on (the seccomp program). */
  readonly inputs: readonly Buffer[];
  /**
   * The launcher writes to the descriptor after the inputs once the command is about to run —
   * false when the arguments (a test seam's) do not say so, and a silent launcher proves nothing.
   */
  readonly startedFd: boolean;
  /**
   * Call after bwrap has exited (its PID namespace is gone, so nothing inside still runs): an
   * execution point the mounts could not hold — a file that did not exist, a symlinked name — that
   * the command created or replaced is moved aside (`NAME.forkloop-blocked-TIME`, nothing is
   * lost); one line each for the result. Then the points stop being held for other sessions
   * (held-points.ts).
   */
  settle(): string[];
}

export interface SandboxCallOptions {
  readonly home?: string;
  readonly forkloopHome?: string | undefined;
  /**
   * The user's forkloop directory, where a running call records the points it is watched for
   * (held-points.ts). Default `forkloopHome`, else `home/.forkloop`.
   */
  readonly userDir?: string | undefined;
  /** The descriptor number of the first input in the launched process (process-group.ts). */
  readonly firstInputFd: number;
  /** Test seam (code only; no setting or variable reaches it): how a plan becomes bwrap's arguments. */
  readonly sandboxArgs?: (plan: SandboxPlan) => string[];
  /** Execution points besides the settings' (git's). */
  readonly extraPoints?: (context: {
    cwd: string;
    roots: readonly string[];
    home: string;
  }) => ExecutionPoint[];
}

/** Directories the sandbox mounts afresh: what the host keeps there is not visible inside. */
const FRESH_DIRS = ["/tmp", "/run", "/var/run", "/dev", "/proc"];

/**
 * The sandbox for one Bash call (R-S6, R-S9): the plan bwrap gets, with the execution points
 * inside the writable roots made read-only (a missing directory is created empty first, so the
 * command cannot create it; a missing file is watched and moved aside afterwards), host sockets
 * hidden, hard links to files outside the workspace read-only (outside-links.ts), and the
 * unix-socket filter. A string is why it cannot run.
 */
export function prepareSandboxCall(
  bwrap: string,
  policy: SandboxPolicy,
  context: { readonly cwd: string; readonly workspaceRoots: readonly string[] },
  options: SandboxCallOptions,
): SandboxCall | string {
  const roots = [...new Set(context.workspaceRoots.map(real))];
  const cwd = real(context.cwd);
  const home = options.home ?? homedir();
  const git = gitExecutionPoints({ dirs: [cwd, ...roots], home });
  const points = [
    ...settingsExecutionPoints({ cwd, roots, home, forkloopHome: options.forkloopHome }),
    ...git.points,
  ];
  const guard = guardPoints(points, roots);
  if (typeof guard === "string") return guard;
  const links = otherHardLinks(guard.readOnly, roots);
  if (links === undefined) {
    return `The sandbox cannot protect what runs later: a file of ${guard.readOnly.join(", ")} has other hard links, and the workspace is too large to find them all. Remove the extra links (find . -samefile FILE lists them) and run the command again. The command was not run.`;
  }
  const pinned = git.dotGitDirs.map(real).filter((dir) => roots.some((root) => isInside(dir, root)));
  // Names of files outside the workspace (pnpm's store, a local clone's source) are read-only.
  const outside = outsideLinks(roots, [cwd, ...pinned]);
  if (!outside.ok) return outside.reason;
  const newRepositories = watchNewRepositories([...new Set([cwd, ...roots])]);
  const network = policy.network === true;
  // Always, not only with the network shared: a host socket file the kernel lists under no usable
  // path (renamed after bind, bound by a relative name) cannot be covered by a bind, and socket
  // files are reachable across network namespaces (R-S9, unix-socket-filter.ts).
  const filter = unixSocketFilter();
  if (filter === undefined) {
    return `The sandbox cannot run commands on ${process.arch}: forkloop's unix-socket filter knows x64 and arm64 only, and without it host unix sockets (a docker daemon's, an ssh agent's) would be reachable. Run with --sandbox off to run commands unsandboxed. The command was not run.`;
  }
  const startedFd = options.firstInputFd + 1;
  const plan: SandboxPlan = {
    roots,
    cwd,
    network,
    // `.git` itself is bound onto itself (writable): a mount point cannot be renamed or removed,
    // so a command cannot swap in a repository of its own with other hooks.
    pinned,
    // A second name of a protected file's inode would write through to it.
    readOnly: [...new Set([...guard.readOnly, ...links, ...outside.readOnly])],
    sockets: hostSocketPaths().filter(
      (socket) =>
        roots.some((root) => isInside(socket, root)) || !FRESH_DIRS.some((dir) => isInside(socket, dir)),
    ),
    runFiles: runFiles(),
    varRunDirectory: isOwnDirectory("/var/run"),
    ...(policy.processLimit === undefined ? {} : { processLimit: policy.processLimit }),
    seccompFd: options.firstInputFd,
    startedFd: startedFd,
  };
  const args = (options.sandboxArgs ?? sandboxArgs)(plan);
  // Until `settle`, another session in this workspace must not read what the command may create.
  const release = recordHeldPoints(
    options.userDir ?? forkloopUserDir({ FORKLOOP_HOME: options.forkloopHome, HOME: home }),
    guard.watched.flatMap((point) => [
      { path: point.path, what: point.what },
      ...(point.targetIdentity === undefined && point.target !== point.path
        ? [{ path: point.target, what: point.what }]
        : []),
    ]),
  );
  return {
    launcher: [bwrap, ...args],
    inputs: [filter],
    startedFd: args.some((arg) => arg.includes(startedMarker(startedFd))),
    settle: () => {
      const lines = [
        ...outside.widened.map(
          ({ dir, linked, others }) =>
            `${dir} was read-only in the sandbox: ${linked} of its files are hard links to files outside the workspace (a package store's), and the ${others} other files in it were held with them.`,
        ),
        ...settleWatched(guard.watched),
        ...newRepositories(),
      ];
      release();
      return lines;
    },
  };
}

interface Watched {
  readonly path: string;
  readonly identity: string | undefined;
  /** The symlink's text, when the name is one (restored after its replacement is moved aside). */
  readonly link: string | undefined;
  /** Where the name resolves to, and whether something was there. */
  readonly target: string;
  readonly targetIdentity: string | undefined;
  readonly what: string;
}

/**
 * Read-only binds for the points inside a root; what a mount cannot hold is watched: a missing
 * file (a bind needs something to mount on, and an empty stand-in would show up in the project
 * and in `git add -A`), and a name that is a symlink (the bind lands on its target; the link
 * itself could be replaced). Missing directories are created empty: invisible to git, and then
 * held by the mount like any other.
 */
function guardPoints(
  points: readonly ExecutionPoint[],
  roots: readonly string[],
): { readOnly: string[]; watched: Watched[] } | string {
  const readOnly = new Set<string>();
  const watched = new Map<string, Watched>();
  for (const point of points) {
    const resolved = realpathAllowingMissing(point.path);
    if (!resolved.ok || !roots.some((root) => isInside(resolved.path, root))) continue;
    const target = resolved.path;
    if (identityOf(target) === undefined && point.kind === "directory") {
      try {
        mkdirSync(target, { recursive: true });
      } catch (error) {
        return `The sandbox cannot protect ${point.path} (${point.what}): creating it failed (${(error as NodeJS.ErrnoException).code ?? String(error)}). The command was not run.`;
      }
    }
    const link = linkOf(point.path);
    const targetIdentity = identityOf(target);
    if (targetIdentity !== undefined) readOnly.add(target);
    if (link !== undefined || targetIdentity === undefined)
      watched.set(point.path, {
        path: point.path,
        identity: identityOf(point.path),
        link,
        target,
        targetIdentity,
        what: point.what,
      });
  }
  return { readOnly: [...readOnly], watched: [...watched.values()] };
}

function settleWatched(watched: readonly Watched[]): string[] {
  const lines: string[] = [];
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  for (const point of watched) {
    const replaced = identityOf(point.path) !== point.identity;
    // Made through an unchanged symlink whose target did not exist.
    const madeThrough =
      !replaced && point.targetIdentity === undefined && identityOf(point.target) !== undefined;
    if (!replaced && !madeThrough) continue;
    const moved = replaced ? point.path : point.target;
    const aside = `${moved}.forkloop-blocked-${stamp}`;
    try {
      if (identityOf(moved) !== undefined) renameSync(moved, aside);
      if (replaced && point.link !== undefined) symlinkSync(point.link, point.path);
      lines.push(
        `The sandbox does not let commands create or replace ${point.path} (${point.what}, which runs outside the sandbox later); what the command put there was moved to ${aside}.`,
      );
    } catch (error) {
      lines.push(
        `The command created or replaced ${point.path} (${point.what}) and forkloop could not move it aside (${(error as NodeJS.ErrnoException).code ?? String(error)}): check it before the next session.`,
      );
    }
  }
  return lines;
}

function identityOf(path: string): string | undefined {
  try {
    const stats = lstatSync(path);
    return `${stats.dev}:${stats.ino}:${stats.mode}`;
  } catch {
    return undefined;
  }
}

function linkOf(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Where /etc/resolv.conf points when that is under /run (systemd-resolved), kept in the fresh /run. */
function runFiles(): string[] {
  try {
    const target = realpathSync("/etc/resolv.conf");
    return isInside(target, "/run") || isInside(target, "/var/run") ? [target] : [];
  } catch {
    return [];
  }
}

function isOwnDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
