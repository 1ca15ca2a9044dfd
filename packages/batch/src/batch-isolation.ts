import {
  type CopiesPlacement,
  isolationRecorded,
  openWorkspaceIsolation,
  uncommittedChanges,
} from "@forkloop/tools/workspace";
import { BatchError } from "./batch-error.js";
import type { BatchSpec } from "./batch-store.js";
import { type ItemIsolator, isolateItems } from "./item-isolation.js";
import { plural } from "./plural.js";

/** Tools whose rules let an item change files. */
const EDITING_RULE = /^(Edit|Write|MultiEdit|NotebookEdit|Bash)(\(|$)/;

/**
 * R-B2: whether a new batch's items run isolated — `--isolate` / `--no-isolate`, else on when the
 * prompt's permissions let items change files (a mode that accepts edits, or an allow rule for an
 * editing tool). `reason` is what the notice says.
 */
export function isolationChoice(
  flags: { readonly isolate?: boolean | undefined; readonly "no-isolate"?: boolean | undefined },
  spec: BatchSpec,
): { readonly isolate: boolean; readonly reason: string } {
  if (flags.isolate && flags["no-isolate"])
    throw new BatchError(
      "invalid_batch",
      "give one of --isolate and --no-isolate (isolation is on by default when items may edit).",
    );
  if (flags["no-isolate"]) return { isolate: false, reason: "--no-isolate" };
  if (flags.isolate) return { isolate: true, reason: "--isolate" };
  if (["acceptEdits", "bypassPermissions", "auto"].includes(spec.permissionMode))
    return { isolate: true, reason: `--permission-mode ${spec.permissionMode} lets items edit` };
  const rule = spec.allowedTools.find((entry) => EDITING_RULE.test(entry));
  if (rule !== undefined) return { isolate: true, reason: `--allowed-tools ${rule} lets items edit` };
  return { isolate: false, reason: "items cannot edit" };
}

/**
 * R-B2: an isolated batch starts from a clean tree — its items start from the last commit and
 * their changes are merged over the tree, so uncommitted changes would be in no item's copy.
 * Exit 2 naming the files and the fixes. `stateDirs`: the batch state in the checkout, left out.
 */
export async function refuseDirtyTree(cwd: string, stateDirs: readonly string[]): Promise<void> {
  const dirty = await uncommittedChanges(cwd, stateDirs);
  if (dirty.length === 0) return;
  const shown = dirty.slice(0, 5).join(", ");
  const more = dirty.length > 5 ? ` and ${dirty.length - 5} more` : "";
  throw new BatchError(
    "dirty_worktree",
    `the working tree has uncommitted changes (${plural(dirty.length, "path")}: ${shown}${more}); an isolated batch runs every item in a worktree of the last commit and merges their changes into this tree, so those changes would be in no item's copy. Commit them first (git add -A && git commit), or run the batch with --no-isolate to let items edit the tree in place.`,
  );
}

/**
 * Opens the batch's isolation when it has one (new and isolated, or a resume of one), saying once
 * how items are isolated. Undefined: items work in the project itself. `retriedConflicts`
 * (`--retry-conflicts`, R-B4): that many finished items run again, so the base moves to the
 * tree as it is now — their new change is made against what it is merged into.
 */
export async function openBatchIsolation(
  spec: BatchSpec,
  dir: string,
  start: { readonly isolate: boolean; readonly reason: string } | undefined,
  notice: (line: string) => void,
  retriedConflicts = 0,
  home?: string,
  copies?: CopiesPlacement,
): Promise<(ItemIsolator & { readonly copiesAt: string }) | undefined> {
  if (start === undefined ? !(await isolationRecorded(dir)) : !start.isolate) return undefined;
  let isolation = await openWorkspaceIsolation({
    cwd: spec.cwd,
    batchDir: dir,
    ...(copies === undefined ? {} : { copies }),
  });
  if (retriedConflicts > 0) {
    isolation = Object.assign(await isolation.rebase(), { created: false, copiesAt: isolation.copiesAt });
    const base = isolation.mode === "worktree" ? `commit ${isolation.base!.slice(0, 12)}` : "a new snapshot";
    notice(
      `forkloop batch ${spec.id}: retrying ${plural(retriedConflicts, "item")} (--retry-conflicts) on ${isolation.root} as it is now (${base}, the changes applied since included); the other items are left as they are.`,
    );
  }
  if (isolation.created) {
    const how =
      isolation.mode === "worktree"
        ? `its own git worktree of ${isolation.base!.slice(0, 12)}`
        : `its own copy of ${isolation.root} (not a git repository: a snapshot taken now)`;
    notice(
      `forkloop batch ${spec.id}: items are isolated (${start?.reason}): each works in ${how}; a succeeded item's change is merged into ${isolation.root} once, a change that overlaps another is kept aside as a conflict. --no-isolate edits the tree in place.`,
    );
  }
  // R-B2: where this run makes its copies, for the start line (a resume may place them elsewhere).
  return Object.assign(isolateItems(isolation, dir, home), { copiesAt: isolation.copiesAt });
}

/**
 * R-B4: a finished batch's resume sweeps the ref its last `--retry-conflicts` round's base is held
 * by (its run was stopped after every item settled, before it deleted it).
 */
export async function dropSettledBase(dir: string): Promise<void> {
  if (!(await isolationRecorded(dir))) return;
  const isolation = await openWorkspaceIsolation({ cwd: dir, batchDir: dir });
  await isolation.dropBase();
}
