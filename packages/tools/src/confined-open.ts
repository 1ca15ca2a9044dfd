import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  type Stats,
  statSync,
} from "node:fs";
import { isInside } from "./workspace-paths.js";

export type ConfinedOpen =
  | { readonly ok: true; readonly fd: number; readonly stats: Stats }
  | {
      readonly ok: false;
      /** `missing`: gone; `symlink`: the last component is a symlink now; `outside`: the opened file's real path left the roots. */
      readonly problem: "missing" | "symlink" | "outside" | "unopenable";
      /** The errno code when open failed. */
      readonly code?: string;
    };

/**
 * Opens `path` once and judges what was opened, never the name again (R-S4):
 * the last component must not be a symlink (O_NOFOLLOW), and the opened file's real path — the
 * kernel's name for the descriptor, `/proc/self/fd/N` — must lie inside one of `realRoots`
 * (already resolved with realpath). A hostile process that swaps a symlink in after the
 * confinement check, or renames a directory on the way, therefore gets nothing read. O_NONBLOCK:
 * a FIFO swapped in cannot hang the open. The caller closes `fd`.
 */
export function openConfined(path: string, realRoots: readonly string[]): ConfinedOpen {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") return { ok: false, problem: "symlink", code };
    if (code === "ENOENT") return { ok: false, problem: "missing", code };
    return { ok: false, problem: "unopenable", ...(code === undefined ? {} : { code }) };
  }
  try {
    const stats = fstatSync(fd);
    const real = openedRealPath(fd, path, stats);
    if (real === undefined || !realRoots.some((root) => isInside(real, root))) {
      closeSync(fd);
      return { ok: false, problem: "outside" };
    }
    return { ok: true, fd, stats };
  } catch (error) {
    closeSync(fd);
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, problem: "unopenable", ...(code === undefined ? {} : { code }) };
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
