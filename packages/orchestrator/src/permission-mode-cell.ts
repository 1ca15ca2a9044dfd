import type { PermissionMode } from "@forkloop/loop-core";
import { PERMISSION_MODES } from "@forkloop/tools";

/**
 * A session's live permission mode, shared with its sub-agents' worker threads (R-S14). A mode
 * changed during a turn (`query().setPermissionMode("plan")`) must reach sub-agents already
 * running: each of their permission checks reads the cell at call time instead of a mode copied
 * into the task when it forked. One Int32 (the mode's index), read and written atomically.
 */
export type PermissionModeCell = SharedArrayBuffer;

export function createPermissionModeCell(mode: PermissionMode): PermissionModeCell {
  const cell = new SharedArrayBuffer(4);
  writePermissionMode(cell, mode);
  return cell;
}

export function writePermissionMode(cell: PermissionModeCell, mode: PermissionMode): void {
  Atomics.store(new Int32Array(cell), 0, PERMISSION_MODES.indexOf(mode));
}

export function readPermissionMode(cell: PermissionModeCell): PermissionMode {
  return PERMISSION_MODES[Atomics.load(new Int32Array(cell), 0)] ?? "plan";
}
