import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readlinkSync,
  readSync,
  type Stats,
  statSync,
} from "node:fs";
import { type HeldPoint, type HeldPoints, heldReason } from "../sandbox/held-points.js";
import { isInside, realWorkspaceRoots } from "../workspace-paths.js";

/**
 * Caps (R-S8). Instructions — memory files and their imports, skills, agent definitions,
 * commands — go into the model's context whole; settings and MCP configs are parsed.
 */
export const INSTRUCTION_FILE_MAX_BYTES = 256 * 1024;
export const CONFIG_FILE_MAX_BYTES = 1024 * 1024;

/** Where a project file may really live, and how large it may be (R-S8). */
export interface ProjectFileRules {
  /**
   * The directories the file's real path must lie in (the workspace for project files, the
   * user's own directories for user-level ones); resolved with realpath here. Omitted: anywhere
   * (a repository's own git files, which git itself would read wherever a gitfile points).
   */
  readonly roots?: readonly string[];
  /** Bytes; a larger file is refused, never cut. */
  readonly maxBytes: number;
  /** Refuse a file with more than one hard link (default true): a link made to a file outside. */
  readonly singleLink?: boolean;
  /** What the file is, for the message ("memory file", "skill", "settings file"). */
  readonly what: string;
  /** How to allow what was refused, when the default advice does not fit. */
  readonly fix?: string;
  /**
   * What running sandboxed commands (another session's too) may still create (held-points.ts,
   * R-S9): such a file is refused, present or not, until the command has ended.
   */
  readonly held?: HeldPoints;
}

export type ProjectFileRead =
  | { readonly status: "read"; readonly text: string; readonly realPath: string }
  /** Absent (or an empty path component on the way): nothing to say. */
  | { readonly status: "missing" }
  /** Present but refused: `message` names the file, the reason and how to allow it (a line for stderr). */
  | {
      readonly status: "refused";
      readonly message: string;
      /** Why, e.g. `it is a FIFO`. */
      readonly reason: string;
      /** How to allow it, e.g. `replace it with a regular file`. */
      readonly fix: string;
      /** Set when a running sandboxed command holds it: the caller skips it, whatever it does with other refusals. */
      readonly heldBy?: HeldPoint;
    };

/**
 * Reads a file a repository ships (memory files, their imports, skills, agent definitions,
 * commands, settings, `.mcp.json`) as the Read tool reads a file (R-S8): opened once, judged on
 * the opened descriptor, never by its name again. A committed `CLAUDE.md -> /proc/self/environ`
 * would otherwise put the whole environment (API key included) into every system prompt, a hard
 * link reaches a file outside the workspace that no symlink check sees, and a FIFO or
 * `/dev/zero` hangs or exhausts session start.
 *
 * The name is stat'ed first only so that a device or FIFO is never opened at all; what decides
 * is the descriptor: O_NONBLOCK (a FIFO swapped in cannot hang the open), fstat (regular file,
 * one link, under the cap), the kernel's name for it (`/proc/self/fd/N`, inside the roots).
 */
export function readProjectFile(path: string, rules: ProjectFileRules): ProjectFileRead {
  const heldBy = rules.held?.find(path);
  if (heldBy !== undefined) {
    const refused = refuse(
      path,
      rules,
      heldReason(heldBy),
      "start the session again once that command has ended",
    );
    return { ...refused, heldBy };
  }
  const named = statOrMissing(path);
  if (named === "missing") return { status: "missing" };
  if (named !== undefined && !named.isFile()) return refuse(path, rules, `it is ${kindOf(named)}`);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { status: "missing" };
    return refuse(path, rules, `it cannot be opened (${code ?? "unknown error"})`);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return refuse(path, rules, `it is ${kindOf(stats)}`);
    const real = openedRealPath(fd);
    if (rules.roots !== undefined) {
      const roots = realWorkspaceRoots(rules.roots);
      if (real === undefined || !roots.some((root) => isInside(real, root))) {
        return refuse(
          path,
          rules,
          `its real path ${real ?? "(unknown)"} is outside ${roots.join(", ")}`,
          rules.fix ?? "make it a regular file inside that directory (not a link to one outside)",
        );
      }
    }
    if ((rules.singleLink ?? true) && stats.nlink > 1) {
      return refuse(
        path,
        rules,
        `it has ${stats.nlink} hard links (one may be a file outside)`,
        rules.fix ?? "make it a file of its own: copy it instead of linking it",
      );
    }
    if (stats.size > rules.maxBytes) return tooLarge(path, rules, stats.size);
    const bytes = readUpTo(fd, rules.maxBytes + 1);
    // A file that grew after fstat (or a /proc file, whose size reads 0) is refused, not cut.
    if (bytes.length > rules.maxBytes) return tooLarge(path, rules, bytes.length);
    return { status: "read", text: bytes.toString("utf8"), realPath: real ?? path };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return refuse(path, rules, `it cannot be read (${code ?? (error as Error).message})`);
  } finally {
    closeSync(fd);
  }
}

/** Up to `limit` bytes from `fd`, read until end of file. */
function readUpTo(fd: number, limit: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < limit) {
    const chunk = Buffer.alloc(Math.min(64 * 1024, limit - total));
    const count = readSync(fd, chunk, 0, chunk.length, null);
    if (count === 0) break;
    chunks.push(chunk.subarray(0, count));
    total += count;
  }
  return Buffer.concat(chunks, total);
}

function statOrMissing(path: string): Stats | "missing" | undefined {
  try {
    return statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ELOOP, EACCES …: left to the open, which names the reason.
    return code === "ENOENT" || code === "ENOTDIR" ? "missing" : undefined;
  }
}

function openedRealPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  return "not a regular file";
}

function tooLarge(path: string, rules: ProjectFileRules, size: number): ProjectFileRead {
  return refuse(
    path,
    rules,
    `it is ${size} bytes, over the ${rules.maxBytes}-byte limit`,
    rules.fix ?? "shorten it",
  );
}

function refuse(
  path: string,
  rules: ProjectFileRules,
  reason: string,
  fix?: string,
): Extract<ProjectFileRead, { status: "refused" }> {
  const how = fix ?? rules.fix ?? "replace it with a regular file";
  return {
    status: "refused",
    message: `forkloop: skipped ${rules.what} ${path}: ${reason}. To use it, ${how}.`,
    reason,
    fix: how,
  };
}
