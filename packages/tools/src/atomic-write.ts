import { randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  fsyncSync,
  openSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Writes `data` to `path` through a new file in the same directory renamed over the target
 * (R-S4): the write is atomic (a crash leaves the old file or the new one, never half of it), and
 * it never changes the inode `path` had — so a hard link from the workspace to an outside file
 * cannot carry a Write or an Edit outside (the other name keeps the old content). The file's
 * permission bits are kept (a new file gets `newFileMode`, default 0o666 less the umask). Throws the fs error (ENOSPC, EACCES …); the target is then unchanged.
 */
export function writeFileAtomicSync(
  path: string,
  data: Uint8Array,
  options: { newFileMode?: number } = {},
): void {
  let mode: number | undefined;
  try {
    mode = statSync(path).mode & 0o7777;
  } catch {
    // A new file: the default mode.
  }
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.forkloop-tmp`);
  const fd = openSync(temporary, "wx", mode ?? options.newFileMode ?? 0o666);
  try {
    let offset = 0;
    while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(fd);
  try {
    if (mode !== undefined) chmodSync(temporary, mode);
    renameSync(temporary, path);
  } catch (error) {
    unlinkSync(temporary);
    throw error;
  }
}
