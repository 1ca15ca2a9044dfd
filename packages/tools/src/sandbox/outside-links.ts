import { type Dirent, lstatSync, readdirSync } from "node:fs";
import { join, sep } from "node:path";
import { isInside } from "../workspace-paths.js";

/**
 * Files in the writable workspace that are hard links to a file outside it (R-S9): a name in the
 * workspace of an inode with more links than the workspace holds names for. The sandbox binds the
 * workspace writable by name, so a write through such a name changes the file outside — pnpm's
 * store (every project's node_modules on the machine share it), the source repository of a
 * `git clone --local`, a `cp -al` backup. The sandbox cannot make such a link (a link across its
 * mounts is EXDEV): they are made outside it, before or during the session.
 *
 * They are held by read-only binds. bwrap's cost grows with the square of its mounts (1,000 binds
 * take 1.6 s, 2,000 take 6.8 s on the 2-core machine), so the names are covered by at most
 * MOUNT_BUDGET binds: a directory none of whose files is writable anyway (every regular file in
 * it linked outside) is bound whole; past the budget, the highest directories holding almost only
 * such files (at most 1 % others, pnpm's `node_modules/.pnpm/lock.yaml`) are bound whole and their
 * other files are read-only in the sandbox too, said in the result; past that the call is refused
 * naming the fix. Inside a `.git` directory only `objects/pack` is bound whole (mayBindWhole).
 */

/** Read-only binds one call may add for outside links. */
export const MOUNT_BUDGET = 64;
/** Past this many directory entries the walk gives up and the call is refused. */
const OUTSIDE_LINKS_WALK_LIMIT = 1_000_000;
/** A directory bound whole past the budget holds at most this share of other regular files. */
const TOLERATED_SHARE = 0.01;

export type OutsideLinks =
  | {
      readonly ok: true;
      /** Paths (files or directories) to bind read-only. */
      readonly readOnly: readonly string[];
      /** Directories bound whole that also hold files not linked outside (one line for the result). */
      readonly widened: readonly { readonly dir: string; readonly linked: number; readonly others: number }[];
      /** How many names were linked outside. */
      readonly linked: number;
    }
  | { readonly ok: false; readonly reason: string };

interface DirEntry {
  readonly files: readonly (readonly [name: string, key: string, nlink: number])[];
  readonly dirs: readonly string[];
}

/**
 * Directories walked before, by path, with the identity and times they had: an unchanged
 * directory holds the same names (its files' link counts are re-read only when it changed — a link
 * made outside the sandbox to a name the workspace already had is not seen until then).
 */
const walked = new Map<string, { readonly stamp: string; readonly entry: DirEntry }>();

function readDir(dir: string, budget: { left: number }): DirEntry | undefined {
  let stamp: string;
  try {
    const stats = lstatSync(dir);
    stamp = `${stats.dev}:${stats.ino}:${stats.mtimeMs}:${stats.ctimeMs}`;
  } catch {
    return undefined;
  }
  const known = walked.get(dir);
  if (known !== undefined && known.stamp === stamp) {
    budget.left -= known.entry.files.length + known.entry.dirs.length;
    return known.entry;
  }
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  budget.left -= entries.length;
  const files: [string, string, number][] = [];
  const dirs: string[] = [];
  for (const entry of entries) {
    if (entry.isDirectory()) dirs.push(entry.name);
    else if (entry.isFile()) {
      try {
        const stats = lstatSync(join(dir, entry.name));
        files.push([entry.name, `${stats.dev}:${stats.ino}`, stats.nlink]);
      } catch {
        // Gone since the listing: nothing to hold.
      }
    }
  }
  const entry = { files, dirs };
  walked.set(dir, { stamp, entry });
  return entry;
}

interface Node {
  readonly path: string;
  readonly linkedFiles: string[];
  readonly children: Node[];
  linked: number;
  others: number;
  /** Counted by an earlier call (a directory that call bound whole). */
  counted?: true;
}

/**
 * Directories an earlier call bound whole, with their identity: inside the sandbox nothing could
 * change them, and whatever a process outside added there is held by the same bind again, so they
 * are not walked again while they are the same directory (pnpm's node_modules: one lstat).
 */
const boundWhole = new Map<string, { readonly id: string; readonly node: Node }>();

function directoryId(dir: string): string | undefined {
  try {
    const stats = lstatSync(dir);
    return stats.isDirectory() ? `${stats.dev}:${stats.ino}` : undefined;
  } catch {
    return undefined;
  }
}

/** Remembers the directories this call binds whole (under `roots`), forgetting earlier ones there. */
function rememberBound(roots: readonly string[], trees: readonly Node[], readOnly: readonly string[]): void {
  for (const path of [...boundWhole.keys()])
    if (roots.some((root) => isInside(path, root))) boundWhole.delete(path);
  const whole = new Set(readOnly);
  const visit = (node: Node) => {
    const id = whole.has(node.path) ? directoryId(node.path) : undefined;
    if (id !== undefined) boundWhole.set(node.path, { id, node: { ...node, counted: true } });
    else for (const child of node.children) visit(child);
  };
  for (const tree of trees) visit(tree);
}

/** The outside links in `roots` and the binds that hold them; `keepWritable` are never bound whole. */
export function outsideLinks(
  roots: readonly string[],
  keepWritable: readonly string[],
  limit = OUTSIDE_LINKS_WALK_LIMIT,
): OutsideLinks {
  const budget = { left: limit };
  const names = new Map<string, { nlink: number; paths: string[] }>();
  const trees: Node[] = [];
  const seen = new Set<string>();
  for (const root of roots) {
    if (roots.some((other) => other !== root && isInside(root, other))) continue;
    const tree = walkTree(root, names, seen, budget);
    if (tree === "limit")
      return {
        ok: false,
        reason: `The sandbox cannot check the workspace for hard links to files outside it: it has more than ${limit.toLocaleString("en-US")} entries. Run the command with the workspace narrowed (a subdirectory as the working directory) or with --sandbox off. The command was not run.`,
      };
    if (tree !== undefined) trees.push(tree);
  }
  const outside = new Set<string>();
  for (const { nlink, paths } of names.values())
    if (nlink > paths.length) for (const path of paths) outside.add(path);
  for (const tree of trees) count(tree, outside);
  const linked = trees.reduce((sum, tree) => sum + tree.linked, 0);
  if (linked === 0) {
    rememberBound(roots, trees, []);
    return { ok: true, readOnly: [], widened: [], linked: 0 };
  }
  const exact = trees.flatMap((tree) => cover(tree, keepWritable, 0, true));
  if (exact.length <= MOUNT_BUDGET) {
    rememberBound(roots, trees, exact);
    return { ok: true, readOnly: exact, widened: [], linked };
  }
  const widened: { dir: string; linked: number; others: number }[] = [];
  const wide = trees.flatMap((tree) => cover(tree, keepWritable, TOLERATED_SHARE, true, widened));
  if (wide.length <= MOUNT_BUDGET) {
    rememberBound(roots, trees, wide);
    return { ok: true, readOnly: wide, widened, linked };
  }
  rememberBound(roots, trees, []);
  const examples = [...outside].slice(0, 3).join(", ");
  return {
    ok: false,
    reason: `The sandbox cannot hold ${linked} files in the workspace read-only: they are hard links to files outside it (${examples} …), spread over more than ${MOUNT_BUDGET} directories, and a write through one would change the file outside. Replace them with copies (pnpm: package-import-method=copy) or run with --sandbox off. The command was not run.`,
  };
}

function walkTree(
  dir: string,
  names: Map<string, { nlink: number; paths: string[] }>,
  seen: Set<string>,
  budget: { left: number },
): Node | undefined | "limit" {
  if (seen.has(dir)) return undefined;
  seen.add(dir);
  const bound = boundWhole.get(dir);
  if (bound !== undefined && bound.id === directoryId(dir)) return bound.node;
  const entry = readDir(dir, budget);
  if (budget.left < 0) return "limit";
  const node: Node = { path: dir, linkedFiles: [], children: [], linked: 0, others: 0 };
  if (entry === undefined) return node;
  for (const [name, key, nlink] of entry.files) {
    const path = join(dir, name);
    node.linkedFiles.push(path);
    if (nlink < 2) continue;
    const known = names.get(key);
    if (known === undefined) names.set(key, { nlink, paths: [path] });
    else known.paths.push(path);
  }
  for (const name of entry.dirs) {
    const child = walkTree(join(dir, name), names, seen, budget);
    if (child === "limit") return "limit";
    if (child !== undefined) node.children.push(child);
  }
  return node;
}

/** Counts, per directory, the names linked outside and the other regular files below it. */
function count(node: Node, outside: ReadonlySet<string>): void {
  if (node.counted === true) return;
  const files = node.linkedFiles.splice(0);
  for (const file of files) {
    if (outside.has(file)) node.linkedFiles.push(file);
    else node.others++;
  }
  node.linked = node.linkedFiles.length;
  for (const child of node.children) {
    count(child, outside);
    node.linked += child.linked;
    node.others += child.others;
  }
}

/**
 * The binds for one directory's outside links: the directory itself when its share of other files
 * is at most `share` (never a root, nor a directory holding a path kept writable), else its own
 * linked files and its children's binds.
 */
function cover(
  node: Node,
  keepWritable: readonly string[],
  share: number,
  isRoot: boolean,
  widened?: { dir: string; linked: number; others: number }[],
): string[] {
  if (node.linked === 0) return [];
  const wholly = node.others <= share * (node.linked + node.others);
  if (
    !isRoot &&
    wholly &&
    mayBindWhole(node.path) &&
    !keepWritable.some((path) => isInside(path, node.path))
  ) {
    if (node.others > 0) widened?.push({ dir: node.path, linked: node.linked, others: node.others });
    return [node.path];
  }
  return [
    ...node.linkedFiles,
    ...node.children.flatMap((child) => cover(child, keepWritable, share, false, widened)),
  ];
}

/**
 * Whether a directory may be bound whole (no file can then be made in it): not inside a git
 * directory, where `git clone --local` links every object and a commit adds new ones to the same
 * fan-out directories — except `objects/pack`, where only fetch and repack write.
 */
function mayBindWhole(dir: string): boolean {
  const parts = dir.split(sep);
  if (!parts.includes(".git")) return true;
  return parts.at(-1) === "pack" && parts.at(-2) === "objects";
}
