import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** The first executable file named `name` in a PATH-style list, or undefined. */
export function findExecutable(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir.length === 0) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}
