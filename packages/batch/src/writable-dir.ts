import { constants } from "node:fs";
import { access, mkdir, rm, stat, statfs } from "node:fs/promises";
import { dirname, join } from "node:path";
import { capitalize, errnoFix, errnoReason } from "@forkloop/sdk/errors";
import { writeDurably } from "@forkloop/tools/workspace";
import { BatchError } from "./batch-error.js";

/** Journal bytes an item needs: enqueue, claim and settle records with the item's final text. */
export const JOURNAL_BYTES_PER_ITEM = 8 * 1024;
/** Report bytes an item needs: a results.jsonl line and a report.md row. */
export const REPORT_BYTES_PER_ITEM = 8 * 1024;
const SLACK_BYTES = 1024 * 1024;

/**
 * A directory forkloop must write to is checked before the first model request — it is
 * a directory (not a file), writable (a probe file is written, fsync'd and removed) and has room
 * for what will go there — so a batch that cannot write its journal or report fails in the first
 * second, not after paying for every item.
 */
export async function checkWritableDir(
  dir: string,
  options: {
    readonly role: string;
    /** What will be written there; without it only writability is checked (no probe, no space). */
    readonly neededBytes?: number;
    readonly fix: string;
  },
): Promise<void> {
  const info = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    const code = error.code ?? "";
    throw new BatchError(
      "batch_dir_unwritable",
      `cannot write the ${options.role} ${dir}: ${errnoReason(code)}. ${capitalize(errnoFix(code))}. ${options.fix}`,
    );
  });
  if (info && !info.isDirectory()) {
    throw new BatchError(
      "batch_dir_unwritable",
      `${options.role} ${dir} is a file, not a directory. ${options.fix}`,
    );
  }
  const probe = join(dir, `.forkloop-probe-${process.pid}`);
  try {
    await makeDirectory(dir);
    if (options.neededBytes === undefined) await access(dir, constants.W_OK);
    else await writeDurably(probe, Buffer.alloc(4096));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    throw new BatchError(
      "batch_dir_unwritable",
      `cannot write the ${options.role} ${dir}: ${errnoReason(code)}. ${capitalize(errnoFix(code))}. ${options.fix}`,
    );
  } finally {
    if (options.neededBytes !== undefined) await rm(probe, { force: true }).catch(() => {});
  }
  if (options.neededBytes === undefined) return;
  const space = await statfs(dir);
  const free = space.bavail * space.bsize;
  const needed = options.neededBytes + SLACK_BYTES;
  if (free < needed) {
    throw new BatchError(
      "batch_dir_unwritable",
      `the ${options.role} ${dir} has ${formatBytes(free)} free, and about ${formatBytes(needed)} will be written there. Free some space. ${options.fix}`,
    );
  }
}

function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * `mkdir -p` that reports the real reason: Node's recursive mkdir says ENOENT on a read-only file
 * system, so the first missing level is made without `recursive` to get EROFS / EACCES.
 */
async function makeDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    let missing = dir;
    while (dirname(missing) !== missing && !(await exists(dirname(missing)))) missing = dirname(missing);
    await mkdir(missing, 0o700); // throws the errno that made the recursive one fail
    throw error;
  }
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
