import { closeSync, readSync } from "node:fs";
import { openConfined } from "../confined-open.js";

/** Why a file a search walked over was not searched (reported in the Grep output, R-S4). */
export type SkipReason = "too-large" | "hard-linked" | "outside";

export type ConfinedRead =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly skipped?: SkipReason };

/**
 * Opens `path` once and decides on what was opened, never by re-opening the name (R-P1, see
 * openConfined): the opened file must be a regular file inside a workspace root, with one link
 * (a hard link may be an outside file, R-S4), no larger than `maxBytes`. A hostile process that
 * swaps a symlink in between the walk and the read therefore gets nothing read. `realRoots` must
 * be resolved (realpath) already. Unreadable and vanished files are `ok: false`.
 */
export function readConfinedFile(path: string, realRoots: readonly string[], maxBytes: number): ConfinedRead {
  const opened = openConfined(path, realRoots);
  if (!opened.ok) return opened.problem === "outside" ? { ok: false, skipped: "outside" } : { ok: false };
  const { fd, stats } = opened;
  try {
    if (!stats.isFile()) return { ok: false };
    if (stats.nlink > 1) return { ok: false, skipped: "hard-linked" };
    if (stats.size > maxBytes) return { ok: false, skipped: "too-large" };
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
