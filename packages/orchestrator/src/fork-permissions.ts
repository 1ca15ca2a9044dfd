import type { CanUseTool, PermissionMode, Tool } from "@forkloop/loop-core";
import { createPermissionChecker } from "@forkloop/tools";
import { readPermissionMode } from "./permission-mode-cell.js";
import type { SubAgentIo } from "./sub-agent-io.js";
import type { SubAgentTask } from "./sub-agent-types.js";

/**
 * A sub-agent's permission checks: its own tool subset (it sends the parent's whole tool list,
 * cache-safe, but may only call its own), then the profile's rules in the mode read at each call
 * (R-S14), so a switch reaches a running sub-agent; an `ask` goes to the parent. Throws on a
 * malformed rule.
 */
export function forkPermissions(
  task: SubAgentTask,
  tools: readonly Tool[],
  io: Pick<SubAgentIo, "askParent">,
): CanUseTool {
  const { profile } = task;
  const allowed = new Set(task.toolNames);
  const currentMode = (): PermissionMode =>
    task.permissionModeCell === undefined
      ? profile.permissionMode
      : readPermissionMode(task.permissionModeCell);
  const checker = createPermissionChecker({
    mode: currentMode,
    rules: profile.permissionRules,
    cwd: task.cwd,
    workspaceRoots: task.workspaceRoots,
    ...(profile.home === undefined ? {} : { home: profile.home }),
    tools,
    ...(io.askParent === undefined ? {} : { askCaller: io.askParent }),
  });
  return async (toolName, input, options) => {
    if (!allowed.has(toolName)) {
      return {
        behavior: "deny",
        message: `${toolName} is not available to this sub-agent; its tools are: ${[...allowed].join(", ") || "none"}`,
      };
    }
    return checker(toolName, input, options);
  };
}
