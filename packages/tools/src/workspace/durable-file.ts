import { open, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * Writes `text` to `path` and fsyncs it before resolving (a short write is continued). A new file
 * is the owner's alone (R-S13: batch state holds prompts, file contents and results).
 */
export async function writeDurably(path: string, text: string | Buffer): Promise<void> {
  const handle = await open(path, "w", 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsync of a directory: makes a rename or a new file in it durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * R-R4: replaces `path` atomically — temp file, fsync, rename, directory fsync — so a crash or
 * a full disk leaves either the old file or the new one, never a half-written one.
 */
export async function replaceAtomically(path: string, text: string | Buffer): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}`;
  try {
    await writeDurably(temporary, text);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
  await rename(temporary, path);
  await syncDirectory(dirname(path));
}
