import { createHash } from "node:crypto";
import { lstat, mkdir, rmdir, statfs } from "node:fs/promises";
import { freemem } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import { copiesOwnerDirName, memoryCopiesParents, SHM_COPIES_DIR } from "../workspace-paths.js";
import { replaceAtomically } from "./durable-file.js";
import { git } from "./git-command.js";
import { readIfPresent } from "./read-if-present.js";
import { WorkspaceError } from "./workspace-error.js";

/**
 * R-B2: where a batch run makes its item copies. They are scratch — an item cut short starts
 * again from a clean copy, a finished item's change is in the journal and its plan (and a
 * conflict's diff in the batch's directory) before its copy is put back — so they may live on a
 * memory-backed file system: making a copy is thousands of file creations, which ext4 makes
 * ~0.8 ms each when a batch's copies are made side by side (bench/batch-isolation: 16 worktrees
 * of 5,000 files at once took 15–19.5 s on disk, 1.7–2.6 s on /dev/shm).
 */
export interface CopiesPlacement {
  /** How many copies a run holds at once (its concurrency): the room a memory-backed directory needs. */
  readonly pool: number;
  /**
   * FORKLOOP_WORKSPACES_DIR: an absolute directory to make the copies under, or `batch` for the
   * batch's own directory; unset: a memory-backed directory when one has room, else the batch's.
   */
  readonly dir?: string | undefined;
  /** The memory-backed directory tried (default: the temp directory or $XDG_RUNTIME_DIR, when tmpfs). */
  readonly memory?: string;
}

export interface CopiesAt {
  /** The directory this run's copies are made in. */
  readonly dir: string;
  /** Every directory a run of this batch made copies in (recorded in the batch's directory): what a sweep empties. */
  readonly swept: readonly string[];
  /** Where, as the batch's start line says it. */
  readonly said: string;
  /** Outside the batch's directory: emptied directories are removed when a run ends. */
  readonly placed: boolean;
}

/** Where the copies of every run of the batch went: a resume sweeps them all (a kill -9 keeps them). */
export const COPIES_FILE = "copies.json";
const copiesRecord = z.object({ dirs: z.array(z.string()) });

const TMPFS_MAGIC = 0x01021994;
/** Room kept for a copy beyond its files' pages: a pool's copies, the ones being deleted, growth. */
const MARGIN = 2;

/** The copies' directory in the batch's own directory (where they are made when not placed elsewhere). */
function batchCopiesDir(batchDir: string): string {
  return join(batchDir, "workspaces");
}

/**
 * R-B2: the copies' directory of this run, recorded in `batchDir` before any copy is made; without
 * `placement`, the batch's own directory. `size` measures one copy (bytes and files).
 */
export async function placeCopies(
  batchDir: string,
  placement: CopiesPlacement | undefined,
  size: () => Promise<{ bytes: number; files: number }>,
): Promise<CopiesAt> {
  const own = batchCopiesDir(batchDir);
  const recordPath = join(batchDir, COPIES_FILE);
  const text = await readIfPresent(recordPath);
  const recorded = text === undefined ? [] : (copiesRecord.safeParse(JSON.parse(text)).data?.dirs ?? []);
  const chosen = placement === undefined ? { dir: own, said: own } : await choose(batchDir, placement, size);
  const dir = chosen.dir;
  if (dir !== own && !recorded.includes(dir))
    await replaceAtomically(recordPath, `${JSON.stringify({ dirs: [...recorded, dir] }, null, 2)}\n`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return { dir, swept: [...new Set([own, dir, ...recorded])], said: chosen.said, placed: dir !== own };
}

async function choose(
  batchDir: string,
  placement: CopiesPlacement,
  size: () => Promise<{ bytes: number; files: number }>,
): Promise<{ dir: string; said: string }> {
  const own = batchCopiesDir(batchDir);
  const asked = placement.dir?.trim();
  if (asked === "batch") return { dir: own, said: `${own} (FORKLOOP_WORKSPACES_DIR=batch)` };
  if (asked !== undefined && asked !== "") {
    if (!isAbsolute(asked))
      throw new WorkspaceError(
        `FORKLOOP_WORKSPACES_DIR=${asked} is not an absolute path; give the directory item copies are made under (or batch, for the batch's own directory).`,
      );
    if (pseudo(asked))
      throw new WorkspaceError(
        `FORKLOOP_WORKSPACES_DIR=${asked} is under /dev, /proc or /sys, where an item's file tools refuse to work; choose another directory (/dev/shm, or a tmpfs mounted elsewhere, keeps copies in memory).`,
      );
    const dir = await privateDir(asked, batchDir);
    if (dir === undefined)
      throw new WorkspaceError(
        `FORKLOOP_WORKSPACES_DIR=${asked}: ${join(asked, copiesOwnerDirName())} is not a directory of this user's alone; remove it or choose another directory.`,
      );
    return { dir, said: `${dir} (FORKLOOP_WORKSPACES_DIR)` };
  }
  const memory = await memoryDir(placement.memory);
  if (memory === undefined) return { dir: own, said: own };
  const room = await statfs(memory);
  const copy = await size();
  const pages = copy.bytes + copy.files * room.bsize;
  const needed = MARGIN * Math.max(1, placement.pool) * pages;
  const files = MARGIN * Math.max(1, placement.pool) * copy.files;
  const free = room.bavail * room.bsize;
  // tmpfs counts its size limit, not the memory left: both must hold the copies.
  if (needed > free || needed > freemem() / 2 || files > room.ffree)
    return { dir: own, said: `${own} (${memory} has too little room for ${placement.pool} copies)` };
  const dir = await privateDir(memory, batchDir);
  if (dir === undefined) return { dir: own, said: own };
  return { dir, said: `${dir} (in memory: scratch, a copy is made again when lost)` };
}

/**
 * The first tmpfs among the candidates: the temp directory (tmpfs on many distributions),
 * $XDG_RUNTIME_DIR, then /dev/shm (its `forkloop-<uid>` directory is the one place under /dev an
 * item's file tools accept, workspace-paths.ts).
 */
async function memoryDir(named: string | undefined): Promise<string | undefined> {
  const candidates =
    named !== undefined
      ? [named]
      : memoryCopiesParents().filter(
          (dir): dir is string => dir !== undefined && isAbsolute(dir) && !pseudo(dir),
        );
  for (const dir of candidates)
    if ((await statfs(dir).catch(() => undefined))?.type === TMPFS_MAGIC) return dir;
  return undefined;
}

/** Where file tools would refuse the copies (workspace-paths.ts): under /dev (but /dev/shm), /proc or /sys. */
function pseudo(dir: string): boolean {
  const path = resolve(dir);
  return path !== "/dev/shm" && /^\/(dev|proc|sys)(\/|$)/.test(path);
}

/**
 * `<parent>/forkloop-<uid>/<batch>`: the user's own directory (0700, refused when someone else's
 * or a symlink: /dev/shm is shared by every user), one per batch directory.
 */
async function privateDir(parent: string, batchDir: string): Promise<string | undefined> {
  // On /dev/shm, the one directory there file tools accept (workspace-paths.ts).
  const mine = resolve(parent) === "/dev/shm" ? SHM_COPIES_DIR : join(parent, copiesOwnerDirName());
  await mkdir(mine, { recursive: true, mode: 0o700 }).catch(() => {});
  const stats = await lstat(mine).catch(() => undefined);
  const uid = process.getuid?.();
  if (
    stats === undefined ||
    !stats.isDirectory() ||
    (uid !== undefined && stats.uid !== uid) ||
    (stats.mode & 0o077) !== 0
  )
    return undefined;
  return join(mine, createHash("sha256").update(resolve(batchDir)).digest("hex").slice(0, 16));
}

/** One worktree's size: the base's files (git's listing, no checkout). */
export async function checkoutSize(root: string, base: string): Promise<{ bytes: number; files: number }> {
  const run = await git(root, ["ls-tree", "-r", "-l", "-z", base]);
  let bytes = 0;
  let files = 0;
  for (const entry of run.stdout.toString("utf8").split("\0")) {
    const size = Number(entry.split(/\s+/)[3]);
    if (!Number.isFinite(size)) continue;
    bytes += size;
    files++;
  }
  return { bytes, files };
}

/** A placed copies' directory removed when a run leaves it empty (a kept conflict's copy keeps it). */
export async function tidyCopies(at: CopiesAt): Promise<void> {
  if (at.placed) await rmdir(at.dir).catch(() => {});
}
