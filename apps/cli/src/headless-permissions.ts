import type { CanUseTool, PermissionMode, Tool } from "@forkloop/loop-core";
import { createPermissionChecker } from "@forkloop/tools";
import type { PermissionRules } from "./agent-options.js";
import type { PermissionDenialRecord } from "./stream-json-writer.js";

/**
 * Permissions of a headless run (R-P1), from @forkloop/tools' checker (modes + Claude Code rule
 * syntax). Nobody can answer an "ask" here, so there is no ask caller: whatever would ask is
 * denied with a message saying how to allow it, and every denial is reported in the result line
 * (`permission_denials`), like Claude Code.
 */
export function createHeadlessPermissions(options: {
  mode: PermissionMode;
  rules: PermissionRules;
  tools: readonly Tool[];
  cwd: string;
}): { canUseTool: CanUseTool; denials(): PermissionDenialRecord[] } {
  const denials: PermissionDenialRecord[] = [];
  const canUseTool = createPermissionChecker({
    mode: options.mode,
    rules: options.rules,
    tools: options.tools,
    cwd: options.cwd,
    // Forking a sub-agent needs no approval itself: the sub-agent's own tool calls are checked.
    noApprovalTools: ["TodoWrite", "Agent", "Task", "Skill"],
    onDenial: (denial) =>
      denials.push({ tool_name: denial.toolName, tool_use_id: denial.toolUseId, tool_input: denial.input }),
  });
  return { canUseTool, denials: () => [...denials] };
}
