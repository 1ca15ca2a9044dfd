import { readFile } from "node:fs/promises";

/** A state file's text, or undefined when it does not exist (not written yet); other errors throw. */
export async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
