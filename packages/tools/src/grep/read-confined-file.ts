import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  statSync,
} from "node:fs";
import { isInside } from "../workspace-paths.js";

/** Why a file a search walked over was not searched (reported in the Grep output, issue 10 item 8). */
export type SkipReason = "too-large" | "hard-linked" | "outside";

export type ConfinedRead =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly skipped?: SkipReason };

/**
 * Opens `path` once and decides on what was opened, never by re-opening the name (R-P1): the
 * final component must not be a symlink (O_NOFOLLOW), the opened file must be a regular file
 * with one link (a hard link may be an outside file, R-S4) no larger than `maxBytes`, and its
 * real path (`/proc/self/fd/N` on Linux) must lie inside a workspace root. A hostile process
 * that swaps a symlink in between the walk and the read therefore gets nothing read.
 * `realRoots` must be resolved (realpath) already. Unreadable and vanished files are `ok: false`.
 */
export function readConfinedFile(path: string, realRoots: readonly string[], maxBytes: number): ConfinedRead {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return { ok: false };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { ok: false };
    if (stats.nlink > 1) return { ok: false, skipped: "hard-linked" };
    if (stats.size > maxBytes) return { ok: false, skipped: "too-large" };
    const real = openedRealPath(fd, path, stats);
    if (real === undefined || !realRoots.some((root) => isInside(real, root)))
      return { ok: false, skipped: "outside" };
    // Read what is there now, at most one byte past the cap (the file may have grown since fstat).
    const buffer = Buffer.allocUnsafe(Math.min(stats.size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length === buffer.length) {
        if (length > maxBytes) return { ok: false, skipped: "too-large" };
        break;
      }
    }
    return { ok: true, bytes: buffer.subarray(0, length) };
  } catch {
    return { ok: false };
  } finally {
    closeSync(fd);
  }
}

/** The opened file's real path: the kernel's name for the descriptor, else the name's realpath if it is still the same inode. */
function openedRealPath(fd: number, path: string, stats: { dev: number; ino: number }): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    try {
      const real = realpathSync(path);
      const now = statSync(real);
      return now.dev === stats.dev && now.ino === stats.ino ? real : undefined;
    } catch {
      return undefined;
    }
  }
}
