import { execFile, spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { cp, lstat, mkdir, readdir, readFile, readlink, realpath, rename, rm, rmdir } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { basename, join, relative, resolve, sep } from "node:path";
import { z } from "zod";
import {
  type CopiesAt,
  type CopiesPlacement,
  checkoutSize,
  placeCopies,
  tidyCopies,
} from "./copies-placement.js";
import { replaceAtomically } from "./durable-file.js";
import { git, gitOk, gitWithoutFiltersOk, nulSeparated } from "./git-command.js";
import { readIfPresent } from "./read-if-present.js";
import { SerialLock } from "./serial-lock.js";
import { batchBaseRef, workingTreeCommit } from "./working-tree-commit.js";
import { WorkspaceError } from "./workspace-error.js";
import { restoreChanged, worktreeChanges } from "./worktree-changes.js";

/**
 * R-B2: each batch item works in its own copy of the project, made from the batch's base (never
 * from the live tree, which earlier items' edits change): a git worktree detached at the commit
 * the batch started from when the project is a git repository, else a copy of a snapshot taken
 * when the batch started (`cp -a --reflink=auto`: copy-on-write where the file system has it, a
 * plain copy elsewhere — never hard links, which would let an item's in-place write reach the
 * original). The item's directory has the same relative paths as the project, so tools,
 * permission rules and the sandbox work unchanged with it as their workspace.
 */

export type IsolationMode = "worktree" | "copy";

/** One changed path of an item, against the batch's base. */
export interface FileChange {
  /** Relative to the isolation root (the repository's top level, or the project). */
  readonly path: string;
  /** The base's content; null when the item created the file. */
  readonly before: Buffer | null;
  /** The item's content; null when the item deleted the file. */
  readonly after: Buffer | null;
  /** 0o755 for an executable file, else 0o644. */
  readonly mode: number;
  /** Why the path cannot be applied (a symlink, a submodule), when it cannot. */
  readonly unsupported?: string;
}

export interface ItemWorkspace {
  /** Where the item works: its copy of the project directory. */
  readonly dir: string;
  /** The copy's own root (the worktree or the copy), which `remove` deletes. */
  readonly root: string;
  /** What the item changed against the base. */
  changes(): Promise<readonly FileChange[]>;
  /**
   * The copy made the base again for another item, in place (R-B2): every file the item wrote,
   * created or deleted — ignored ones and commits included — put back as the base has it.
   * Rejects when it cannot; the copy is then only fit for `remove`.
   */
  reset(): Promise<void>;
  remove(): Promise<void>;
}

export interface WorkspaceIsolation {
  readonly mode: IsolationMode;
  /** The real workspace's root: the repository's top level, or the project directory. */
  readonly root: string;
  /** The commit items start from (worktree mode). */
  readonly base?: string;
  /** Where this run's item copies live (R-B2: the batch's directory, or a memory-backed one). */
  readonly workspacesDir: string;
  /** Makes an item's copy named `key` (an item id and attempt); a leftover of the same name is replaced. */
  create(key: string): Promise<ItemWorkspace>;
  /** Removes every item copy left by an earlier run (a kill -9 keeps them); returns how many. */
  sweep(): Promise<number>;
  /**
   * R-B4 `--retry-conflicts`: the same isolation with its base moved to the workspace as it is
   * now (the batch's applied changes included), recorded before it is returned, so copies made
   * from then on — by this run and by later resumes — start from it.
   */
  rebase(): Promise<WorkspaceIsolation>;
  /**
   * R-B4: every item is settled, so no copy is made from the base again: the ref a `rebase` holds
   * it by (`refs/forkloop/batch-bases/<batch>`) is deleted, if it still holds this base.
   */
  dropBase(): Promise<void>;
  /** The run is over: a copies' directory outside the batch's, left empty, is removed. */
  close(): Promise<void>;
}

const recordSchema = z.object({
  mode: z.enum(["worktree", "copy"]),
  root: z.string(),
  prefix: z.string(),
  base: z
    .string()
    .regex(/^[0-9a-f]{40,64}$/)
    .optional(),
  /** Copy mode: the snapshot's directory in the batch's state (`base` until a rebase). */
  snapshot: z
    .string()
    .regex(/^base(-\d+)?$/)
    .optional(),
});
type IsolationRecord = z.infer<typeof recordSchema>;

const ISOLATION_FILE = "isolation.json";

/** The git repository `cwd` is in (its top level), or undefined outside one. */
async function gitTopLevel(cwd: string): Promise<string | undefined> {
  const run = await git(cwd, ["rev-parse", "--show-toplevel"]);
  return run.code === 0 ? run.stdout.toString("utf8").trim() : undefined;
}

/**
 * The uncommitted changes of the repository `cwd` is in (tracked edits and untracked files not
 * ignored), as `git status --porcelain` names them; `exclude` (the batch's own state when it lives
 * in the checkout) is left out. Empty outside a repository.
 */
export async function uncommittedChanges(cwd: string, exclude: readonly string[] = []): Promise<string[]> {
  const top = await gitTopLevel(cwd);
  if (top === undefined) return [];
  const out = await gitOk(top, ["status", "--porcelain", "-z", "--untracked-files=all", "--no-renames"]);
  const excluded = exclude.map((path) => relative(top, resolve(path)));
  return nulSeparated(out)
    .map((entry) => entry.slice(3))
    .filter(
      (path) =>
        !excluded.some((prefix) => prefix !== "" && (path === prefix || path.startsWith(`${prefix}/`))),
    );
}

/**
 * Opens the isolation of the batch whose state is `batchDir`: the one recorded there (a resume
 * keeps the base it started from), or a new one for `cwd` — `git` when `cwd` is in a repository
 * with a commit, `copy` otherwise (the snapshot is taken now). `mode` forces one. `base` (git):
 * `head`, the last commit (default), or `working-tree`, HEAD plus the uncommitted changes as a
 * commit of their own (`workingTreeCommit`, held by `ref`), so copies hold what the tree holds.
 * `commit` (git): that commit, which the repository must have — a queued batch's workers and
 * producers all start from the commit the batch was created at (R-B1, R-B2).
 */
export async function openWorkspaceIsolation(options: {
  readonly cwd: string;
  readonly batchDir: string;
  readonly mode?: IsolationMode;
  readonly base?: "head" | "working-tree";
  readonly ref?: string;
  readonly commit?: string;
  /** R-B2: a batch run's copies placed by the room they need (else in the batch's directory). */
  readonly copies?: CopiesPlacement;
}): Promise<WorkspaceIsolation & { readonly created: boolean; readonly copiesAt: string }> {
  const recordPath = join(options.batchDir, ISOLATION_FILE);
  let record = await readRecord(recordPath);
  const created = record === undefined;
  if (record === undefined) {
    await mkdir(options.batchDir, { recursive: true, mode: 0o700 });
    record = await newRecord(options);
    await replaceAtomically(recordPath, `${JSON.stringify(record, null, 2)}\n`);
  }
  const at = record;
  const copies = await placeCopies(options.batchDir, options.copies, () =>
    at.mode === "worktree"
      ? checkoutSize(at.root, at.base!)
      : treeSize(join(options.batchDir, at.snapshot ?? "base")),
  );
  return Object.assign(isolationOf(record, options.batchDir, copies), { created, copiesAt: copies.said });
}

function isolationOf(record: IsolationRecord, batchDir: string, copies: CopiesAt): WorkspaceIsolation {
  const isolation =
    record.mode === "worktree" ? worktreeIsolation(record, copies) : copyIsolation(record, batchDir, copies);
  return {
    ...isolation,
    close: () => tidyCopies(copies),
    async rebase() {
      const moved: IsolationRecord =
        record.mode === "worktree"
          ? { ...record, base: await workingTreeCommit(record.root, batchDir) }
          : { ...record, snapshot: `base-${Date.now()}` };
      if (record.mode === "copy") await snapshot(record.root, join(batchDir, moved.snapshot!), batchDir);
      // The switch: a kill before it keeps the old base, after it the new one.
      await replaceAtomically(join(batchDir, ISOLATION_FILE), `${JSON.stringify(moved, null, 2)}\n`);
      if (record.mode === "copy")
        await rm(join(batchDir, record.snapshot ?? "base"), { recursive: true, force: true });
      return isolationOf(moved, batchDir, copies);
    },
    async dropBase() {
      if (record.mode !== "worktree") return;
      // `-d <ref> <old value>`: left alone when it holds another commit (or none).
      await git(record.root, ["update-ref", "-d", batchBaseRef(batchDir), record.base!]);
    },
  };
}

/** Whether the batch in `batchDir` was started isolated (a resume keeps what it started with). */
export async function isolationRecorded(batchDir: string): Promise<boolean> {
  return (await readRecord(join(batchDir, ISOLATION_FILE))) !== undefined;
}

async function readRecord(path: string): Promise<IsolationRecord | undefined> {
  const text = await readIfPresent(path);
  if (text === undefined) return undefined;
  const parsed = recordSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new WorkspaceError(`${path} is not an isolation record; start a new batch.`);
  return parsed.data;
}

async function newRecord(options: Parameters<typeof openWorkspaceIsolation>[0]): Promise<IsolationRecord> {
  const { cwd, batchDir, mode } = options;
  const top = mode === "copy" ? undefined : await gitTopLevel(cwd);
  if (top !== undefined) {
    const head = await git(top, ["rev-parse", "--verify", "HEAD^{commit}"]);
    if (head.code !== 0) {
      throw new WorkspaceError(
        `${top} is a git repository without a commit, so there is no base for isolated worktrees; commit once (git commit --allow-empty -m base), or do not isolate (forkloop batch --no-isolate; an Agent call without isolation).`,
      );
    }
    if (options.commit !== undefined) {
      const found = await git(top, ["rev-parse", "--verify", "--quiet", `${options.commit}^{commit}`]);
      if (found.code !== 0)
        throw new WorkspaceError(
          `${top} does not have commit ${options.commit}, the base its items start from; fetch it (git fetch, or push it from the producer's checkout), then start again.`,
        );
      return { mode: "worktree", root: top, prefix: relative(top, resolve(cwd)), base: options.commit };
    }
    return {
      mode: "worktree",
      root: top,
      prefix: relative(top, resolve(cwd)),
      base:
        options.base === "working-tree"
          ? await workingTreeCommit(top, batchDir, options.ref)
          : head.stdout.toString().trim(),
    };
  }
  if (options.commit !== undefined)
    throw new WorkspaceError(
      `${cwd} is not in a git repository; isolated items start from commit ${options.commit}, so they need a checkout of the repository that has it.`,
    );
  if (mode === "worktree")
    throw new WorkspaceError(`${cwd} is not in a git repository; isolate with copies instead.`);
  const root = resolve(cwd);
  await snapshot(root, join(batchDir, "base"), batchDir);
  return { mode: "copy", root, prefix: "" };
}

// Item copies: `cp -a --reflink=auto` measured 0.40 s for 5,000 files on ext4 against 1.36 s for
// Node's fs.cp (bench/batch-isolation); Node's is the fallback where there is no `cp`.
async function copyTree(from: string, to: string, skip: string | undefined): Promise<void> {
  if (skip === undefined) return copyEntry(from, to);
  // The batch's state lies inside `from` and the copy goes into it: neither `cp -a` nor Node's
  // fs.cp copies a directory into itself (EINVAL), so the top entries are copied one by one.
  await mkdir(to, { recursive: true, mode: (await lstat(from)).mode & 0o7777 });
  for (const name of await readdir(from)) {
    const source = join(from, name);
    if (resolve(source) !== skip) await copyEntry(source, join(to, name));
  }
}

async function copyEntry(from: string, to: string): Promise<void> {
  if (await cpAvailable()) {
    await new Promise<void>((resolvePromise, reject) => {
      execFile("cp", ["-a", "--reflink=auto", "--", from, to], (error) =>
        error ? reject(new Error(`copying ${from} to ${to}: ${error.message}`)) : resolvePromise(),
      );
    });
    return;
  }
  await cp(from, to, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
}

let cpChecked: Promise<boolean> | undefined;
function cpAvailable(): Promise<boolean> {
  cpChecked ??= new Promise((resolvePromise) =>
    execFile("cp", ["--reflink=auto", "--version"], (error) => resolvePromise(error === null)),
  );
  return cpChecked;
}

/** The copy-mode base: the project as it was when the batch started (the batch's own state left out). */
async function snapshot(root: string, to: string, batchDir: string): Promise<void> {
  await rm(to, { recursive: true, force: true });
  const state = resolve(batchDir);
  const inside = state.startsWith(`${root}${sep}`);
  await copyTree(root, to, inside ? stateRootIn(root, state) : undefined);
}

/** The top directory of the batch's state inside the project (so no copy ever holds it). */
function stateRootIn(root: string, state: string): string {
  const first = relative(root, state).split(sep)[0]!;
  return join(root, first);
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/**
 * R-B2: where removed copies go to be deleted: beside the copies, on the same file system, outside
 * the directory `sweep` and the reports list.
 */
function removingDir(workspacesDir: string): string {
  return `${workspacesDir}-removing`;
}

/**
 * R-B2: a copy taken out of use at once — renamed out of its place (one rename) — and its files
 * deleted by a detached `rm -rf` of their own: a run does not wait for a copy's thousands of
 * unlinks (bench/batch-isolation: a run's idle copies, removed at its end, were a third of a
 * 100-item isolated batch's time), and the deletion finishes when this process exits first. One
 * that a crash cut short is deleted by the next `sweep`. Where the rename cannot be made, the copy
 * is deleted in place, awaited. `before` runs between the rename and the deletion's start (a
 * worktree's prune, which the deletion's unlinks would otherwise slow down).
 */
async function discard(copies: CopiesAt, dir: string, before?: () => Promise<void>): Promise<void> {
  const removing = removingDir(copies.dir);
  const doomed = join(removing, `${basename(dir)}-${randomUUID().slice(0, 8)}`);
  const moved = await mkdir(removing, { recursive: true, mode: 0o700 })
    .then(() => rename(dir, doomed))
    .then(
      () => true,
      () => false,
    );
  if (!moved) await rm(dir, { recursive: true, force: true });
  try {
    await before?.();
  } finally {
    // A placed directory (outside the batch's) is not left behind empty by the last deletion.
    if (moved) deleteDetached(doomed, copies.placed ? removing : undefined);
  }
}

function deleteDetached(dir: string, tidy: string | undefined): void {
  const inProcess = () => void rm(dir, { recursive: true, force: true }).catch(() => {});
  try {
    const child = spawn("rm", ["-rf", "--", dir], { detached: true, stdio: "ignore" });
    child.on("error", inProcess);
    if (tidy !== undefined) child.on("exit", () => void rmdir(tidy).catch(() => {}));
    child.unref();
  } catch {
    inProcess();
  }
}

/**
 * R-B2: every copy a run of the batch left — in each directory runs made copies in (a kill -9
 * keeps them; a memory-backed one may be gone already) — and what `discard` left when a crash cut
 * it short; returns the copies' directories found.
 */
async function sweepCopies(copies: CopiesAt): Promise<string[]> {
  const left: string[] = [];
  await Promise.all(
    copies.swept.map(async (dir) => {
      const names = await readdir(dir).catch(() => []);
      left.push(...names.map((name) => join(dir, name)));
      await Promise.all([
        rm(removingDir(dir), { recursive: true, force: true }),
        ...names.map((name) => rm(join(dir, name), { recursive: true, force: true })),
      ]);
      if (dir !== copies.dir) await rmdir(dir).catch(() => {});
    }),
  );
  return left;
}

function keyDir(workspacesDir: string, key: string): string {
  return join(workspacesDir, createHash("sha256").update(key).digest("hex").slice(0, 16));
}

function worktreeIsolation(
  record: IsolationRecord,
  copies: CopiesAt,
): Omit<WorkspaceIsolation, "rebase" | "dropBase" | "close"> {
  const workspacesDir = copies.dir;
  const base = record.base!;
  // `git worktree add` claims its .git/worktrees/<name> by an atomic mkdir and marks it locked
  // until its checkout is done, so adds of distinct directories run side by side: as many as
  // there are cores (the checkout is CPU-bound), so a batch's first wave does not wait in a line.
  const lanes = Array.from({ length: Math.min(4, availableParallelism()) }, () => new SerialLock());
  let lane = 0;
  const adding = { run: <T>(task: () => Promise<T>) => lanes[lane++ % lanes.length]!.run(task) };
  // A copy is removed by deleting its directory, then `git worktree prune` forgets it. Removals
  // side by side (a run's idle copies at its end) share one prune: one started after their
  // deletions covers them all (bench/batch-isolation: a `git worktree remove` each, one after
  // another, was most of an isolated batch's tail).
  const pruning = new SerialLock();
  let nextPrune: Promise<void> | undefined;
  const prune = () => {
    nextPrune ??= pruning.run(async () => {
      nextPrune = undefined;
      await git(record.root, ["worktree", "prune"]);
    });
    return nextPrune;
  };
  const remove = (root: string) => discard(copies, root, prune);
  // A leftover git may hold locked (killed while it was being added), which a prune never forgets.
  const removeLeftover = async (root: string) => {
    const run = await git(record.root, ["worktree", "remove", "--force", "--force", root]);
    if (run.code !== 0) await remove(root);
  };
  return {
    mode: "worktree",
    root: record.root,
    base,
    workspacesDir,
    async create(key) {
      const root = keyDir(workspacesDir, key);
      await adding.run(async () => {
        // A leftover of a killed attempt is removed first; the check spares every other item two
        // git runs inside this lock. An add that still fails (git's record of a worktree whose
        // directory is gone) is retried once after the removal.
        const add = ["worktree", "add", "--detach", "--quiet", root, base];
        if (await exists(root)) await removeLeftover(root);
        if ((await git(record.root, add)).code === 0) return;
        await removeLeftover(root);
        await gitOk(record.root, add);
      });
      // What the item's change was read as: a reset puts back just those paths when it can.
      let read: readonly FileChange[] | undefined;
      return {
        dir: join(root, record.prefix),
        root,
        changes: async () => {
          read = await worktreeChanges(root, base);
          return read;
        },
        // Far cheaper than a new worktree (bench/batch-isolation: the checkout of every file
        // dominates): the paths the item's change named are put back from it and one status
        // confirms the copy is the base; else git rewrites what differs from the base, and
        // -ff -x also removes ignored files and repositories the item cloned inside.
        reset: async () => {
          const changed = read;
          read = undefined;
          if (changed !== undefined && (await restoreChanged(root, base, changed))) return;
          await gitOk(root, ["checkout", "--quiet", "--detach", "--force", base]);
          await gitWithoutFiltersOk(root, ["clean", "--quiet", "-ffdx"]);
        },
        remove: () => remove(root),
      };
    },
    async sweep() {
      // The directories deleted, then one `git worktree prune` forgets them all (a `worktree
      // remove` each cost a git run per copy, the bulk of a resume after a kill); a worktree git
      // still lists (locked: killed while being added) is removed on its own.
      const left = await sweepCopies(copies);
      await git(record.root, ["worktree", "prune"]);
      const under = (
        await Promise.all(copies.swept.map(async (dir) => [dir, await realpath(dir).catch(() => dir)]))
      ).flat();
      for (const root of await listedWorktrees(record.root))
        if (under.some((dir) => root.startsWith(`${dir}${sep}`))) await removeLeftover(root);
      return left.length;
    },
  };
}

/** The worktrees git lists for the repository at `root` (their directories). */
async function listedWorktrees(root: string): Promise<string[]> {
  const run = await git(root, ["worktree", "list", "--porcelain", "-z"]);
  if (run.code !== 0) return [];
  return nulSeparated(run.stdout)
    .filter((line) => line.startsWith("worktree "))
    .map((line) => line.slice("worktree ".length));
}

function copyIsolation(
  record: IsolationRecord,
  batchDir: string,
  copies: CopiesAt,
): Omit<WorkspaceIsolation, "rebase" | "dropBase" | "close"> {
  const workspacesDir = copies.dir;
  const baseDir = join(batchDir, record.snapshot ?? "base");
  return {
    mode: "copy",
    root: record.root,
    workspacesDir,
    async create(key) {
      const root = keyDir(workspacesDir, key);
      await rm(root, { recursive: true, force: true });
      await copyTree(baseDir, root, undefined);
      return {
        dir: root,
        root,
        changes: () => treeChanges(baseDir, root),
        reset: async () => {
          await discard(copies, root);
          await copyTree(baseDir, root, undefined);
        },
        remove: () => discard(copies, root),
      };
    },
    async sweep() {
      return (await sweepCopies(copies)).length;
    },
  };
}

/** A copy-mode copy's size: the snapshot's files. */
async function treeSize(dir: string): Promise<{ bytes: number; files: number }> {
  const entries = [...(await listTree(dir)).values()];
  return { bytes: entries.reduce((sum, entry) => sum + entry.size, 0), files: entries.length };
}

type Entry = { kind: "file" | "link" | "other"; size: number; mtimeMs: number; mode: number };

async function listTree(root: string): Promise<Map<string, Entry>> {
  const entries = new Map<string, Entry>();
  const walk = async (dir: string): Promise<void> => {
    for (const dirent of await readdir(join(root, dir), { withFileTypes: true })) {
      const path = dir === "" ? dirent.name : `${dir}/${dirent.name}`;
      if (dirent.isDirectory()) {
        await walk(path);
        continue;
      }
      const stats = await lstat(join(root, path));
      entries.set(path, {
        kind: stats.isFile() ? "file" : stats.isSymbolicLink() ? "link" : "other",
        size: stats.size,
        mtimeMs: stats.mtimeMs,
        mode: stats.mode,
      });
    }
  };
  await walk("");
  return entries;
}

/**
 * Copy mode: what differs between the base snapshot and the item's copy. A file whose size and
 * mtime are the copy's (cp -a keeps them) is unchanged; any other is compared by content.
 */
async function treeChanges(baseDir: string, itemDir: string): Promise<FileChange[]> {
  const [base, item] = await Promise.all([listTree(baseDir), listTree(itemDir)]);
  const changes: FileChange[] = [];
  const content = async (root: string, path: string, entry: Entry | undefined): Promise<Buffer | null> => {
    if (entry === undefined) return null;
    return entry.kind === "link" ? Buffer.from(await readlink(join(root, path))) : readFile(join(root, path));
  };
  for (const path of [...new Set([...base.keys(), ...item.keys()])].sort()) {
    const was = base.get(path);
    const now = item.get(path);
    if (was && now && was.kind === now.kind && was.size === now.size && was.mtimeMs === now.mtimeMs) continue;
    const before = await content(baseDir, path, was);
    const after = await content(itemDir, path, now);
    if (before !== null && after !== null && before.equals(after) && was?.mode === now?.mode) continue;
    const odd = [was, now].find((entry) => entry !== undefined && entry.kind !== "file");
    changes.push({
      path,
      before,
      after,
      mode: now !== undefined && (now.mode & 0o111) !== 0 ? 0o755 : 0o644,
      ...(odd === undefined ? {} : { unsupported: odd.kind === "link" ? "a symlink" : "not a regular file" }),
    });
  }
  return changes;
}
