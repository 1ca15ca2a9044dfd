import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";

export type ResolvedPath =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly error: string };

export interface WorkspaceLocation {
  readonly cwd: string;
  readonly workspaceRoots: readonly string[];
}

/** Kernel pseudo-filesystems: reading them can hang (FIFO-like files) or leak host secrets. */
const FORBIDDEN_PREFIXES = ["/proc", "/dev", "/sys"] as const;
/**
 * R-B2: forkloop's own directory on /dev/shm, where a batch run may make its item copies
 * (workspace/copies-placement.ts): /dev/shm is a tmpfs of plain files, not a pseudo-filesystem, and
 * this directory is the user's own (0700). Below it the workspace roots still confine every path.
 */
export const SHM_COPIES_DIR = `/dev/shm/${copiesOwnerDirName()}`;

/** The user's own directory that holds a batch's item copies wherever they are placed in memory. */
export function copiesOwnerDirName(): string {
  return `forkloop-${process.getuid?.() ?? "user"}`;
}

/**
 * Every directory where a batch run may place its item copies outside its batch directory
 * (workspace/copies-placement.ts): the user's own one in the temp directory, $XDG_RUNTIME_DIR,
 * FORKLOOP_WORKSPACES_DIR and /dev/shm. Another item's copy there is protected like the state
 * directory the copies otherwise live in (R-S10).
 */
export function placedCopiesDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const parents = [...memoryCopiesParents(env), env.FORKLOOP_WORKSPACES_DIR].filter(
    (dir): dir is string => dir !== undefined && isAbsolute(dir) && dir !== "/dev/shm",
  );
  return [...new Set([...parents.map((dir) => join(dir, copiesOwnerDirName())), SHM_COPIES_DIR])];
}

/** The memory-backed directories a batch tries for its copies, in order (copies-placement.ts). */
export function memoryCopiesParents(env: NodeJS.ProcessEnv = process.env): (string | undefined)[] {
  return [tmpdir(), env.XDG_RUNTIME_DIR, "/dev/shm"];
}
/** Linux gives up after 40 symlink hops (ELOOP); so do we when following dangling links by hand. */
const MAX_SYMLINK_HOPS = 40;

/**
 * The confinement check every file tool runs before touching a path (R-P1).
 *
 * The path is resolved against `cwd`, then every symlink in it is resolved (for a file that does
 * not exist yet, the nearest existing parent is resolved, and a dangling symlink is followed to
 * where it would write). The real path must lie inside one of the (also resolved) workspace
 * roots. Refused: NUL bytes, `~user`, `..` and absolute escapes, symlinks that leave the roots,
 * `/proc`, `/dev`, `/sys`, and anything that exists but is neither a regular file nor a directory
 * (FIFOs block a reader forever, devices and sockets are not files). On success the returned path
 * is the real path, which is what the tools then open.
 *
 * A symlink swapped in between this check and the open is caught where the tool judges what it
 * opened (Read and Grep: openConfined, O_NOFOLLOW and the descriptor's real path); Write and Edit
 * still go by name (they rename a new file over the target) and assume no hostile local process.
 */
export function resolveInWorkspace(path: string, ctx: WorkspaceLocation): ResolvedPath {
  if (typeof path !== "string" || path.length === 0) return { ok: false, error: "The path is empty." };
  if (path.includes("\0"))
    return { ok: false, error: "The path contains a NUL byte, which no file name may contain." };

  let expanded = path;
  if (path === "~" || path.startsWith("~/")) expanded = join(homedir(), path.slice(1));
  else if (path.startsWith("~")) {
    return {
      ok: false,
      error: `"${path}": ~user expansion is not supported; give a path inside the workspace.`,
    };
  }

  const absolute = isAbsolute(expanded) ? resolve(expanded) : resolve(ctx.cwd, expanded);
  const forbiddenLexical = forbiddenPrefix(absolute);
  if (forbiddenLexical !== undefined) return forbiddenError(path, forbiddenLexical);

  const real = realpathAllowingMissing(absolute, 0);
  if (!real.ok) return { ok: false, error: `"${path}": ${real.error}` };
  const forbiddenReal = forbiddenPrefix(real.path);
  if (forbiddenReal !== undefined) return forbiddenError(path, forbiddenReal);

  const roots = realWorkspaceRoots(ctx.workspaceRoots);
  if (!roots.some((root) => isInside(real.path, root))) {
    const shown = real.path === absolute ? `"${path}"` : `"${path}" (which resolves to "${real.path}")`;
    return {
      ok: false,
      error:
        `${shown} is outside the workspace (${roots.join(", ")}). File tools only work inside the ` +
        "workspace roots; ask the user to add the directory to permissions.additionalDirectories if it is needed.",
    };
  }

  const kind = fileKind(real.path);
  if (kind !== "file" && kind !== "directory" && kind !== "missing") {
    return {
      ok: false,
      error: `"${path}" is a ${kind}, not a regular file or directory; file tools refuse it.`,
    };
  }
  return { ok: true, path: real.path };
}

/** The workspace roots as the kernel names them (realpath; a root that does not exist yet stays as given). */
export function realWorkspaceRoots(roots: readonly string[]): string[] {
  return roots.map((root) => {
    const resolvedRoot = realpathAllowingMissing(resolve(root), 0);
    return resolvedRoot.ok ? resolvedRoot.path : resolve(root);
  });
}

/** True when `child` is `root` itself or lies below it (both absolute and resolved). */
export function isInside(child: string, root: string): boolean {
  if (child === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return child.startsWith(prefix);
}

function forbiddenPrefix(path: string): string | undefined {
  if (path !== SHM_COPIES_DIR && isInside(path, SHM_COPIES_DIR)) return undefined;
  return FORBIDDEN_PREFIXES.find((prefix) => isInside(path, prefix));
}

function forbiddenError(path: string, prefix: string): ResolvedPath {
  return {
    ok: false,
    error: `"${path}" is under ${prefix}, a kernel pseudo-filesystem that file tools refuse.`,
  };
}

/** realpath that also works for paths that do not exist yet (writes create them). */
export function realpathAllowingMissing(path: string, hops = 0): ResolvedPath {
  if (hops > MAX_SYMLINK_HOPS) return { ok: false, error: "too many levels of symbolic links." };
  try {
    return { ok: true, path: realpathSync.native(path) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") return { ok: false, error: "too many levels of symbolic links." };
    if (code !== "ENOENT" && code !== "ENOTDIR") {
      return { ok: false, error: `cannot resolve the path (${code ?? String(error)}).` };
    }
  }
  const parent = dirname(path);
  let linkTarget: string | undefined;
  try {
    if (lstatSync(path).isSymbolicLink()) linkTarget = readlinkSync(path);
  } catch {
    // Does not exist at all: resolve the parent and re-attach the name below.
  }
  // A dangling symlink: writing through it would create its target, so the target is what counts.
  if (linkTarget !== undefined) return realpathAllowingMissing(resolve(parent, linkTarget), hops + 1);
  if (parent === path) return { ok: true, path };
  const realParent = realpathAllowingMissing(parent, hops);
  if (!realParent.ok) return realParent;
  return {
    ok: true,
    path: join(realParent.path, path.slice(parent.length + (parent.endsWith(sep) ? 0 : 1))),
  };
}

type FileKind =
  | "file"
  | "directory"
  | "missing"
  | "FIFO"
  | "character device"
  | "block device"
  | "socket"
  | "special file";

function fileKind(path: string): FileKind {
  try {
    const stats = statSync(path);
    if (stats.isFile()) return "file";
    if (stats.isDirectory()) return "directory";
    if (stats.isFIFO()) return "FIFO";
    if (stats.isCharacterDevice()) return "character device";
    if (stats.isBlockDevice()) return "block device";
    if (stats.isSocket()) return "socket";
    return "special file";
  } catch {
    return "missing";
  }
}
