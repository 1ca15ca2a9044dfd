import { randomBytes } from "node:crypto";
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  lstatSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { openDirectoryBeneath } from "./confined-dir.js";

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
  options: {
    newFileMode?: number;
    /**
     * The workspace's real roots: the directory is then opened by a walk from the root that holds
     * it, no component a symlink (confined-dir.ts), and the file is made and renamed in that
     * opened directory — a directory swapped for a symlink after the permission check fails the
     * write (ELOOP, ENOTDIR) instead of carrying it elsewhere (R-S4, R-S10).
     */
    beneath?: readonly string[];
    /** With `beneath`: make missing directories on the way, each inside the one opened before. */
    createParents?: boolean;
  } = {},
): void {
  if (options.beneath === undefined) {
    writeIn(dirname(path), basename(path), data, options.newFileMode);
    return;
  }
  const dirFd = openDirectoryBeneath(dirname(path), options.beneath, {
    create: options.createParents === true,
  });
  try {
    writeIn(`/proc/self/fd/${dirFd}`, basename(path), data, options.newFileMode);
  } finally {
    closeSync(dirFd);
  }
}

/** The atomic write of `name` in the directory `dir` (a path, or an opened one's /proc/self/fd name). */
function writeIn(dir: string, name: string, data: Uint8Array, newFileMode: number | undefined): void {
  const path = join(dir, name);
  let mode: number | undefined;
  try {
    // lstat: the mode of what the name is, never of what a symlink there points at.
    const stats = lstatSync(path);
    if (stats.isFile()) mode = stats.mode & 0o7777;
  } catch {
    // A new file: the default mode.
  }
  const temporary = join(dir, `.${name}.${randomBytes(6).toString("hex")}.forkloop-tmp`);
  const fd = openSync(temporary, "wx", mode ?? newFileMode ?? 0o666);
  try {
    let offset = 0;
    while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temporary);
    throw error;
  }
  try {
    if (mode !== undefined) fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temporary, path);
  } catch (error) {
    unlinkSync(temporary);
    throw error;
  }
}
