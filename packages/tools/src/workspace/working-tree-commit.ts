import { rm } from "node:fs/promises";
import { basename, join, relative, resolve, sep } from "node:path";
import { git, gitOk } from "./git-command.js";

/**
 * R-B4 `--retry-conflicts`: the base a conflicted item is re-run on is the workspace as it is now —
 * the batch's applied changes (uncommitted in the tree) included — so its new change is made
 * against what it will be merged into. In a git repository that tree becomes a commit of its own,
 * written through a scratch index (the user's index, HEAD and branches are never touched) and held
 * by a ref under refs/forkloop/ so `git gc` keeps it while worktrees are made from it. Files
 * .gitignore leaves out are left out, as they are of the first base. R-B2: the same commit is
 * the base of a batch started over uncommitted changes and of an isolated sub-agent, so their
 * copies hold what the tree holds (HEAD plus the uncommitted changes).
 */
export async function workingTreeCommit(
  root: string,
  batchDir: string,
  ref = batchBaseRef(batchDir),
): Promise<string> {
  const index = join(batchDir, "rebase.index");
  const env = {
    GIT_INDEX_FILE: index,
    // An internal commit, on no branch: it needs an identity whatever the user configured.
    GIT_AUTHOR_NAME: "forkloop",
    GIT_AUTHOR_EMAIL: "forkloop@localhost",
    GIT_COMMITTER_NAME: "forkloop",
    GIT_COMMITTER_EMAIL: "forkloop@localhost",
  };
  await rm(index, { force: true });
  try {
    await gitOk(root, ["read-tree", "HEAD"], undefined, env);
    // The batch's own state, when it lives in the checkout, is in no item's copy.
    const state = resolve(batchDir);
    const inside = state.startsWith(`${root}${sep}`) ? relative(root, state).split(sep)[0] : undefined;
    // An ignored state directory is left out by `add -A` already, and naming it (even to exclude
    // it) makes git refuse the whole add ("paths are ignored by one of your .gitignore files").
    const ignored =
      inside !== undefined && (await git(root, ["check-ignore", "-q", "--", inside])).code === 0;
    const pathspec = inside === undefined || ignored ? ["."] : [".", `:(exclude)${inside}`];
    await gitOk(root, ["add", "-A", "--", ...pathspec], undefined, env);
    const tree = (await gitOk(root, ["write-tree"], undefined, env)).toString("utf8").trim();
    const commit = (
      await gitOk(
        root,
        [
          "commit-tree",
          tree,
          "-p",
          "HEAD",
          "-m",
          "forkloop: the working tree, as isolated copies start from it",
        ],
        undefined,
        env,
      )
    )
      .toString("utf8")
      .trim();
    await gitOk(root, ["update-ref", ref, commit]);
    return commit;
  } finally {
    await rm(index, { force: true });
  }
}

/** The ref a batch's rebased base is held by (`git gc` keeps it while copies are made from it). */
export function batchBaseRef(batchDir: string): string {
  return `refs/forkloop/batch-bases/${basename(batchDir)}`;
}
