import { createHash } from "node:crypto";
import { chmod, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { protectedWriteTarget } from "../permissions/protected-paths.js";
import { isInside, realpathAllowingMissing, realWorkspaceRoots } from "../workspace-paths.js";
import { replaceAtomically, syncDirectory, writeDurably } from "./durable-file.js";
import { git, gitWithoutFilters } from "./git-command.js";
import type { FileChange } from "./isolated-workspace.js";

/**
 * R-B3, R-B4: an item's change (its files against the batch's base) laid over the real workspace.
 * Each path is merged three ways — the workspace now, the base, the item — so edits of other items
 * (and of the user) to other lines survive; a path where both changed the same lines, or that
 * cannot be merged (binary, deleted on one side), makes the whole item a conflict and nothing of
 * it is written. A merge that succeeds becomes a plan: every path's content before (its hash) and
 * after, written durably before the journal records it, so an apply cut by kill -9 is finished
 * from the plan on resume (`executePlan` is idempotent: a path already at its new content is left).
 */

export interface PlannedFile {
  readonly path: string;
  /** sha256 of the workspace's content when the plan was made; null: the file did not exist. */
  readonly before: string | null;
  /** sha256 of the new content; null: the plan deletes the file. */
  readonly after: string | null;
  readonly mode: number;
}

export interface ApplyPlan {
  readonly files: readonly PlannedFile[];
}

export interface Conflict {
  readonly path: string;
  readonly reason: string;
}

export type MergeOutcome =
  | { readonly ok: true; readonly plan: ApplyPlan; readonly contents: ReadonlyMap<string, Buffer> }
  | { readonly ok: false; readonly conflicts: readonly Conflict[] };

const PLAN_FILE = "plan.json";

function contentHash(content: Buffer | null): string | null {
  return content === null ? null : createHash("sha256").update(content).digest("hex");
}

function same(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

/** A path from git or a tree walk, held to a relative path inside the root (project files are hostile). */
export function checkedPath(path: string): string {
  if (path === "" || path.startsWith("/") || path.split("/").some((part) => part === ".." || part === "")) {
    throw new Error(
      `refusing to apply the path ${JSON.stringify(path)}: not a relative path inside the workspace`,
    );
  }
  return path;
}

/**
 * Why `path` below `root` is not a place a merge may write, if it is not (R-S4, R-B4): a name on
 * its way is a symlink out of the workspace. The item's copy can hold a directory where the
 * workspace has a link (its command replaced the link in its copy), and a queued change comes from
 * Redis as hostile input: either would otherwise write through the link, outside the workspace.
 */
export function resolvesOutside(root: string, path: string): string | undefined {
  const [realRoot] = realWorkspaceRoots([root]);
  const resolved = realpathAllowingMissing(join(root, path));
  if (resolved.ok && realRoot !== undefined && isInside(resolved.path, realRoot)) return undefined;
  const where = resolved.ok ? resolved.path : resolved.error;
  return `it resolves to ${where}, outside the workspace (a symlink on its way): a merge never writes outside (apply the kept diff by hand if it is meant)`;
}

async function readOrNull(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A directory where a file was (a file replaced by a directory) holds no file content.
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") return null;
    throw error;
  }
}

/**
 * Merges `changes` over the workspace at `root` as it is now. Call it under the apply lock: the
 * plan's `before` hashes are what the workspace held when it was read. A path that is an
 * execution point of the real workspace (R-S10) — its `.git/`, `.forkloop/`, `.claude/`,
 * `.mcp.json`, hook directory, or the user's shell and settings files when `home` is the
 * workspace or below it — is never applied: the copy's own check judged the copy, where such a
 * file runs nothing, and the merge is forkloop's own writer, outside any permission check.
 */
export async function mergeChanges(
  root: string,
  changes: readonly FileChange[],
  context: {
    readonly home?: string;
    /**
     * Paths' contents as changes merged before this one (in the same group apply, not yet written)
     * leave them: read instead of the workspace's (null: deleted).
     */
    readonly over?: ReadonlyMap<string, Buffer | null>;
  } = {},
): Promise<MergeOutcome> {
  const files: PlannedFile[] = [];
  const contents = new Map<string, Buffer>();
  const conflicts: Conflict[] = [];
  for (const change of changes) {
    const path = checkedPath(change.path);
    if (change.unsupported !== undefined) {
      conflicts.push({ path, reason: `${change.unsupported} is never applied` });
      continue;
    }
    const outside = resolvesOutside(root, path);
    if (outside !== undefined) {
      conflicts.push({ path, reason: outside });
      continue;
    }
    const runsLater = protectedWriteTarget(join(root, path), {
      cwd: root,
      ...(context.home === undefined ? {} : { home: context.home }),
    });
    if (runsLater !== undefined) {
      conflicts.push({
        path,
        reason: `it is in ${runsLater}, whose files make programs run later: a merge never writes there (apply the kept diff by hand if it is meant)`,
      });
      continue;
    }
    const current = context.over?.has(path)
      ? (context.over.get(path) ?? null)
      : await readOrNull(join(root, path));
    let next: Buffer | null;
    if (same(current, change.after)) continue; // already there (a re-run, or the same edit twice)
    if (same(current, change.before)) next = change.after;
    else if (current === null || change.after === null || change.before === null) {
      conflicts.push({
        path,
        reason:
          current === null
            ? "deleted in the workspace, changed by the item"
            : change.after === null
              ? "changed in the workspace, deleted by the item"
              : "created both in the workspace and by the item",
      });
      continue;
    } else {
      const merged = await mergeFile(current, change.before, change.after);
      if (merged === undefined) {
        conflicts.push({ path, reason: "the item and the workspace changed the same lines" });
        continue;
      }
      next = merged;
    }
    files.push({ path, before: contentHash(current), after: contentHash(next), mode: change.mode });
    if (next !== null) contents.set(path, next);
  }
  return conflicts.length > 0 ? { ok: false, conflicts } : { ok: true, plan: { files }, contents };
}

/** `git merge-file`'s three-way merge of one file: the merged content, or undefined on a conflict. */
async function mergeFile(current: Buffer, base: Buffer, item: Buffer): Promise<Buffer | undefined> {
  const dir = await mkdtemp(join(tmpdir(), "forkloop-merge-"));
  try {
    await Promise.all([
      writeFile(join(dir, "current"), current),
      writeFile(join(dir, "base"), base),
      writeFile(join(dir, "item"), item),
    ]);
    const run = await gitWithoutFilters(dir, ["merge-file", "-p", "--quiet", "current", "base", "item"]);
    // 0: clean; a positive count of conflicts, or an error (binary files): not merged.
    return run.code === 0 ? run.stdout : undefined;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Writes the plan and every new content into `planDir`, durably (before the journal names it). */
export async function writePlan(
  planDir: string,
  plan: ApplyPlan,
  contents: ReadonlyMap<string, Buffer>,
): Promise<void> {
  await rm(planDir, { recursive: true, force: true });
  await mkdir(planDir, { recursive: true, mode: 0o700 });
  // Side by side: their fsyncs overlap (the apply step runs under the batch's lock, one item at a
  // time: bench/batch-isolation). The plan names them only once each is durable.
  const blobs = new Map<string, Buffer>();
  for (const file of plan.files) if (file.after !== null) blobs.set(file.after, contents.get(file.path)!);
  await allSettledFirst(
    [...blobs].map(([hash, content]) => writeDurably(join(planDir, `${hash}.blob`), content)),
  );
  await replaceAtomically(join(planDir, PLAN_FILE), JSON.stringify(plan));
}

export async function readPlan(planDir: string): Promise<ApplyPlan> {
  return JSON.parse(await readFile(join(planDir, PLAN_FILE), "utf8")) as ApplyPlan;
}

export interface Execution {
  /** Paths written or deleted now. */
  readonly written: readonly string[];
  /** Paths that held neither the plan's before nor its after content (changed by someone else since). */
  readonly diverged: readonly string[];
}

/**
 * Carries out `plan` on `root`: each path replaced atomically (temp file, fsync, rename, directory
 * fsync) or deleted. A path already at its new content is left as it is, so running a plan again —
 * after a kill -9 part-way — finishes it and never applies anything twice.
 */
export async function executePlan(
  root: string,
  planDir: string,
  plan: ApplyPlan,
  contents?: ReadonlyMap<string, Buffer>,
): Promise<Execution> {
  const carryOut = async (file: PlannedFile): Promise<"written" | "diverged" | "there"> => {
    const target = join(root, file.path);
    // Judged again when carried out: a plan finished on resume meets the workspace as it is then.
    if (resolvesOutside(root, file.path) !== undefined) return "diverged";
    // One name per path, not per process: a run cut between writing it and the rename leaves it,
    // and the resume that carries out the same plan writes over it or removes it.
    const temporary = `${target}.forkloop-apply`;
    const now = contentHash(await readOrNull(target));
    if (now === file.after) {
      await rm(temporary, { force: true });
      return "there";
    }
    if (now !== file.before) return "diverged";
    if (file.after === null) {
      await rm(target, { force: true });
      await syncDirectory(dirname(target)).catch(() => {});
    } else {
      const content = contents?.get(file.path) ?? (await readFile(join(planDir, `${file.after}.blob`)));
      await mkdir(dirname(target), { recursive: true });
      await writeDurably(temporary, content);
      await chmod(temporary, file.before === null ? file.mode : await modeOf(target, file.mode));
      await rename(temporary, target);
      await syncDirectory(dirname(target));
    }
    return "written";
  };
  // Paths carried out side by side, their fsyncs overlapping (the apply step runs under the batch's
  // lock, one item at a time: bench/batch-isolation) — one by one when a path lies inside another
  // (a file replaced by a directory: the deletion comes first).
  const planned = new Set(plan.files.map((file) => checkedPath(file.path)));
  const nested = plan.files.some((file) => {
    for (let dir = dirname(file.path); dir !== "."; dir = dirname(dir)) if (planned.has(dir)) return true;
    return false;
  });
  const done: Awaited<ReturnType<typeof carryOut>>[] = [];
  if (nested) for (const file of plan.files) done.push(await carryOut(file));
  else done.push(...(await allSettledFirst(plan.files.map(carryOut))));
  const paths = (kind: string) =>
    plan.files.filter((_, index) => done[index] === kind).map((file) => file.path);
  return { written: paths("written"), diverged: paths("diverged") };
}

/** Every one settled before the first failure is passed on: no write is still going when it is. */
async function allSettledFirst<T>(writes: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(writes);
  const failed = settled.find((outcome) => outcome.status === "rejected");
  if (failed !== undefined) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
}

async function modeOf(path: string, fallback: number): Promise<number> {
  return stat(path).then(
    (stats) => stats.mode & 0o7777,
    () => fallback,
  );
}

/**
 * The item's change as a patch (`git apply -p1` / `git apply --3way` reads it), kept aside for a
 * conflict: made by `git diff --no-index` over the changed files only.
 */
export async function changesPatch(changes: readonly FileChange[]): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), "forkloop-patch-"));
  try {
    for (const change of changes) {
      const path = checkedPath(change.path);
      for (const [side, content] of [
        ["a", change.before],
        ["b", change.after],
      ] as const) {
        if (content === null) continue;
        await mkdir(dirname(join(dir, side, path)), { recursive: true });
        await writeFile(join(dir, side, path), content);
      }
    }
    await mkdir(join(dir, "a"), { recursive: true });
    await mkdir(join(dir, "b"), { recursive: true });
    // The trees are named a and b, so `--no-prefix` prints a/<path> and b/<path>, as git does.
    // No external diff and no textconv (R-S7): porcelain `diff` would start the program the global
    // config names (`diff.external`, a `textconv` its `core.attributesFile` selects) — with HOME the
    // workspace, a file a background command may have just written — and the patch would be
    // that program's output instead of one `git apply` reads.
    const run = await git(dir, [
      "diff",
      "--no-index",
      "--no-ext-diff",
      "--no-textconv",
      "--binary",
      "--no-color",
      "--no-prefix",
      "a",
      "b",
    ]);
    // `--no-index` exits 1 when the trees differ.
    if (run.code > 1) throw new Error(`git diff --no-index: ${run.stderr.trim()}`);
    return run.stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
