import { lstat, mkdir, readFile, readlink, rm, rmdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { checkedPath, resolvesOutside } from "./apply-changes.js";
import { gitOk, gitWithoutFiltersOk, nulSeparated } from "./git-command.js";
import type { FileChange } from "./isolated-workspace.js";
import { WorkspaceError } from "./workspace-error.js";

/**
 * R-B2: what an item changed in its worktree against the batch's base commit. An item's copy is
 * read once per item, so the git runs here are most of isolation's cost per item
 * (bench/batch-isolation). The usual item leaves HEAD at the base: one `git status` names every
 * changed and untracked path (.gitignore respected) with the base's blob of each, the item's
 * content is read from the file itself, and the base's from one `cat-file --batch`. An item that
 * committed, or left a merge half done, is read through the index instead (`add -A`, then
 * `diff --cached --raw` against the base names the base and new blob of every path).
 */
export async function worktreeChanges(root: string, base: string): Promise<FileChange[]> {
  const entries = nulSeparated(
    await gitOk(
      root,
      ["status", "--porcelain=v2", "-z", "--branch", "--no-renames", "--untracked-files=all", "--ignored=no"],
      undefined,
      undefined,
      "refresh",
    ),
  );
  const head = entries.find((entry) => entry.startsWith("# branch.oid "))?.slice("# branch.oid ".length);
  if (head !== base || entries.some((entry) => !/^(# |1 |\? )/.test(entry)))
    return indexedChanges(root, base);
  const listed: { path: string; baseMode: string; baseId: string | null }[] = [];
  for (const entry of entries) {
    if (entry.startsWith("? ")) {
      listed.push({ path: entry.slice(2), baseMode: "000000", baseId: null });
    } else if (entry.startsWith("1 ")) {
      // `1 XY sub mH mI mW hH hI path`: mH and hH are the path's mode and blob at HEAD, the base.
      const fields = entry.split(" ");
      // A submodule in the index (the item staged a repository of its own) is one, as `add -A` says.
      const baseMode = fields[2]!.startsWith("S") || fields[4] === "160000" ? "160000" : fields[3]!;
      listed.push({
        path: fields.slice(8).join(" "),
        baseMode,
        baseId: fields[3] === "000000" ? null : fields[6]!,
      });
    }
  }
  const blobs = await readBlobs(
    root,
    listed.flatMap((entry) => (entry.baseId !== null && entry.baseMode !== "160000" ? [entry.baseId] : [])),
  );
  const changes: FileChange[] = [];
  for (const entry of listed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const baseOdd =
      entry.baseMode === "120000" ? "a symlink" : entry.baseMode === "160000" ? "a submodule" : undefined;
    const before = entry.baseId === null || entry.baseMode === "160000" ? null : blobs.get(entry.baseId)!;
    // A directory git lists as untracked (`dir/`) holds a repository of its own: `add -A` would
    // record it as a submodule.
    if (entry.path.endsWith("/")) {
      changes.push({
        path: entry.path.slice(0, -1),
        before,
        after: null,
        mode: 0o644,
        unsupported: "a submodule",
      });
      continue;
    }
    const now = await itemFile(join(root, entry.path));
    const mode = now.executable ? 0o755 : 0o644;
    const unsupported = baseOdd ?? now.unsupported;
    if (
      unsupported === undefined &&
      sameContent(before, now.content) &&
      (entry.baseMode === "100755") === now.executable
    )
      continue; // staged by the item and put back in the file: nothing changed
    changes.push({
      path: entry.path,
      before,
      after: now.content,
      mode,
      ...(unsupported === undefined ? {} : { unsupported }),
    });
  }
  return changes;
}

function sameContent(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

/** The item's side of a path: its content (null when it is gone), or why it cannot be applied. */
async function itemFile(
  path: string,
): Promise<{ content: Buffer | null; executable: boolean; unsupported?: string }> {
  const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") return undefined;
    throw error;
  });
  // A tracked file replaced by a directory is gone; the directory's files are listed on their own.
  if (stats === undefined || stats.isDirectory()) return { content: null, executable: false };
  if (stats.isSymbolicLink())
    return { content: Buffer.from(await readlink(path)), executable: false, unsupported: "a symlink" };
  if (!stats.isFile()) return { content: null, executable: false, unsupported: "not a regular file" };
  return { content: await readFile(path), executable: (stats.mode & 0o111) !== 0 };
}

/** The index route: every file staged (`add -A`), then the base and new blob of each changed path. */
async function indexedChanges(root: string, base: string): Promise<FileChange[]> {
  await gitOk(root, ["add", "-A"]);
  const raw = nulSeparated(
    await gitWithoutFiltersOk(root, ["diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev", base]),
  );
  const entries: { path: string; oldMode: string; newMode: string; oldId: string; newId: string }[] = [];
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const [oldMode, newMode, oldId, newId] = raw[index]!.slice(1).split(" ");
    entries.push({
      path: raw[index + 1]!,
      oldMode: oldMode!,
      newMode: newMode!,
      oldId: oldId!,
      newId: newId!,
    });
  }
  const wanted = (id: string, mode: string) => !/^0+$/.test(id) && mode !== "160000";
  const blobs = await readBlobs(
    root,
    entries.flatMap((entry) => [
      ...(wanted(entry.oldId, entry.oldMode) ? [entry.oldId] : []),
      ...(wanted(entry.newId, entry.newMode) ? [entry.newId] : []),
    ]),
  );
  const blob = (id: string, mode: string): Buffer | null => (wanted(id, mode) ? blobs.get(id)! : null);
  const changes: FileChange[] = [];
  for (const entry of entries) {
    const odd = [entry.oldMode, entry.newMode].find((mode) => mode === "120000" || mode === "160000");
    changes.push({
      path: entry.path,
      before: blob(entry.oldId, entry.oldMode),
      after: blob(entry.newId, entry.newMode),
      mode: entry.newMode === "100755" ? 0o755 : 0o644,
      ...(odd === undefined ? {} : { unsupported: odd === "120000" ? "a symlink" : "a submodule" }),
    });
  }
  return changes;
}

/**
 * The contents of the blobs `ids`, read by one `git cat-file --batch` (one git run per item, not
 * two per changed path). Its answer per id: `<id> blob <size>\n<content>\n`.
 */
async function readBlobs(root: string, ids: readonly string[]): Promise<Map<string, Buffer>> {
  const unique = [...new Set(ids)];
  const blobs = new Map<string, Buffer>();
  if (unique.length === 0) return blobs;
  const out = await gitWithoutFiltersOk(root, ["cat-file", "--batch"], Buffer.from(`${unique.join("\n")}\n`));
  let at = 0;
  for (const id of unique) {
    const end = out.indexOf(10, at);
    const header = out.subarray(at, end).toString("utf8").split(" ");
    if (header[0] !== id || header[1] !== "blob")
      throw new WorkspaceError(`git cat-file could not read ${id} in ${root}: ${header.join(" ")}`);
    const size = Number(header[2]);
    blobs.set(id, Buffer.from(out.subarray(end + 1, end + 1 + size)));
    at = end + 1 + size + 1;
  }
  return blobs;
}

/**
 * R-B2: a used worktree put back to the base from the change its item was read as — each changed
 * or deleted path written back with the base's content, each created one removed (and the
 * directories that leaves empty) — then one `git status` (ignored files and the index included)
 * confirms the copy is the base. False when it cannot say so: a path it cannot put back (a
 * symlink, a submodule), a path that resolves outside the copy (a directory the item, or a command
 * it left running, replaced with a link: writing through it would change files outside the copy,
 * R-S4), the item's commit or staged change, or anything the read did not name (an ignored file);
 * the caller then resets with git.
 */
export async function restoreChanged(
  root: string,
  base: string,
  changes: readonly FileChange[],
): Promise<boolean> {
  if (changes.some((change) => change.unsupported !== undefined)) return false;
  try {
    for (const change of changes) {
      const path = checkedPath(change.path);
      if (resolvesOutside(root, path) !== undefined) return false;
      const target = join(root, path);
      if (change.before === null) {
        await rm(target);
        for (let dir = dirname(path); dir !== "."; dir = dirname(dir))
          if (
            !(await rmdir(join(root, dir)).then(
              () => true,
              () => false,
            ))
          )
            break;
      } else {
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, change.before);
      }
    }
  } catch {
    return false;
  }
  const status = await gitOk(
    root,
    ["status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignored=traditional"],
    undefined,
    undefined,
    "refresh",
  ).catch(() => undefined);
  if (status === undefined) return false;
  const entries = nulSeparated(status);
  const head = entries.find((entry) => entry.startsWith("# branch.oid "))?.slice("# branch.oid ".length);
  return head === base && entries.every((entry) => entry.startsWith("# "));
}
