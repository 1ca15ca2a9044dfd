import { closeSync, constants, mkdirSync, openSync } from "node:fs";
import { relative, sep } from "node:path";
import { isInside } from "./workspace-paths.js";

/**
 * The directory `dir` opened by walking down from the workspace root that holds it, one component
 * at a time, each opened relative to the one before (`/proc/self/fd/N/NAME`, the kernel's handle on
 * the directory already opened, never its name again) with O_NOFOLLOW and O_DIRECTORY (R-S4,
 * R-S10). A symlink swapped in for a directory on the way after the permission check — by a
 * sandboxed command of a parallel sub-agent, a batch item, any process — fails the walk (ELOOP or
 * ENOTDIR) instead of carrying the write to `.git/hooks` or outside the workspace. `create` makes
 * missing directories on the way, each inside the one opened before. The caller closes the
 * descriptor; `/proc/self/fd/<fd>/NAME` then names a file in that very directory.
 */
export function openDirectoryBeneath(
  dir: string,
  realRoots: readonly string[],
  options: { create?: boolean } = {},
): number {
  const root = realRoots
    .filter((candidate) => isInside(dir, candidate))
    .sort((a, b) => b.length - a.length)[0];
  if (root === undefined)
    throw Object.assign(new Error(`${dir} is outside the workspace`), { code: "EXDEV" });
  let fd = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    for (const name of relative(root, dir)
      .split(sep)
      .filter((part) => part !== "")) {
      if (name === "..") throw Object.assign(new Error(`${dir} climbs out of ${root}`), { code: "EXDEV" });
      const at = `/proc/self/fd/${fd}/${name}`;
      if (options.create === true) {
        try {
          mkdirSync(at);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        }
      }
      const next = openSync(at, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      closeSync(fd);
      fd = next;
    }
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}
