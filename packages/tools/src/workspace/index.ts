/**
 * `@forkloop/tools/workspace`: isolated copies of a project and their changes applied back once
 * (R-B2, R-B3, R-B4). A batch's items and an `Agent` call with `isolation: "worktree"` each work
 * in a git worktree (or a copy outside git) and their change is merged three ways into the tree,
 * or kept aside as a conflict. Also the durable-file helpers those records are written with.
 */
export {
  type ApplyPlan,
  type Conflict,
  changesPatch,
  type Execution,
  executePlan,
  mergeChanges,
  type PlannedFile,
  readPlan,
  writePlan,
} from "./apply-changes.js";
export type { CopiesPlacement } from "./copies-placement.js";
export { replaceAtomically, syncDirectory, writeDurably } from "./durable-file.js";
export { git } from "./git-command.js";
export {
  type FileChange,
  type IsolationMode,
  type ItemWorkspace,
  isolationRecorded,
  openWorkspaceIsolation,
  uncommittedChanges,
  type WorkspaceIsolation,
} from "./isolated-workspace.js";
export { readIfPresent } from "./read-if-present.js";
export { SerialLock } from "./serial-lock.js";
export { openSessionWorktree, type SessionWorktree, type WorktreeBase } from "./session-worktree.js";
