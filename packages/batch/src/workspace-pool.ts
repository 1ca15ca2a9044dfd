import type { ItemWorkspace, WorkspaceIsolation } from "@forkloop/tools/workspace";

/**
 * R-B2: the item copies of one batch run, reused. Making a worktree checks out every file of the
 * project (bench/batch-isolation: ~0.4 s of CPU for 5,000 files, one at a time under git's lock)
 * while putting a used one back to the base rewrites only what its item touched, so a run makes
 * at most one copy per slot (its concurrency) and resets it between items. A copy whose reset
 * fails is removed, never handed out. What a kill -9 leaves is swept on resume with every other
 * copy (`WorkspaceIsolation.sweep`).
 */
export interface WorkspacePool {
  /** A copy at the base: an idle one, or a new one when none is idle. */
  acquire(): Promise<ItemWorkspace>;
  /** The copy put back to the base and made idle (removed if that fails). */
  giveBack(workspace: ItemWorkspace): Promise<void>;
  /** Removes the idle copies (the run is over); copies still handed out are their holders'. */
  drain(): Promise<void>;
}

export function workspacePool(isolation: WorkspaceIsolation): WorkspacePool {
  const idle: ItemWorkspace[] = [];
  let made = 0;
  return {
    acquire() {
      const ready = idle.pop();
      // The key only names the directory: copies are not tied to an item, so a resume sweeps them.
      return ready === undefined
        ? isolation.create(`pool\0${process.pid}\0${made++}`)
        : Promise.resolve(ready);
    },
    async giveBack(workspace) {
      try {
        await workspace.reset();
      } catch {
        await workspace.remove();
        return;
      }
      idle.push(workspace);
    },
    async drain() {
      // Side by side: a worktree's removals share one `git worktree prune` (R-B2).
      await Promise.all(idle.splice(0).map((workspace) => workspace.remove()));
    },
  };
}
