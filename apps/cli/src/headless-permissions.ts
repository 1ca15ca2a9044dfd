import type { CanUseTool, PermissionMode, Tool } from "@forkloop/loop-core";
import * as toolsPackage from "@forkloop/tools";
import type { PermissionRules } from "./agent-options.js";
import type { PermissionDenialRecord } from "./stream-json-writer.js";

type CheckerFactory = (options: {
  mode: PermissionMode;
  rules: { allow: string[]; ask: string[]; deny: string[] };
  tools: readonly Tool[];
  onDenial?: (denial: {
    toolName: string;
    toolUseId: string;
    input: Record<string, unknown>;
    reason: string;
  }) => void;
}) => CanUseTool;

/**
 * Permissions of a headless run (R-P1). Nobody can answer an "ask" here, so whatever would ask
 * is denied with a message naming the flag that allows it; every denial is reported in the
 * result line (`permission_denials`), like Claude Code.
 *
 * Uses @forkloop/tools' `createPermissionChecker` (modes + Claude Code rule syntax). Until that
 * export exists the fallback below applies the modes to bare tool-name rules only.
 */
export function createHeadlessPermissions(options: {
  mode: PermissionMode;
  rules: PermissionRules;
  tools: readonly Tool[];
}): { canUseTool: CanUseTool; denials(): PermissionDenialRecord[] } {
  const denials: PermissionDenialRecord[] = [];
  const record = (toolName: string, toolUseId: string, input: Record<string, unknown>) =>
    denials.push({ tool_name: toolName, tool_use_id: toolUseId, tool_input: input });
  const factory = (toolsPackage as unknown as { createPermissionChecker?: CheckerFactory })
    .createPermissionChecker;
  if (typeof factory === "function") {
    const checker = factory({
      mode: options.mode,
      rules: { allow: [...options.rules.allow], ask: [...options.rules.ask], deny: [...options.rules.deny] },
      tools: options.tools,
      onDenial: (denial) => record(denial.toolName, denial.toolUseId, denial.input),
    });
    return { canUseTool: checker, denials: () => [...denials] };
  }
  const byName = new Map(options.tools.map((tool) => [tool.name, tool]));
  const canUseTool: CanUseTool = async (toolName, input, callOptions) => {
    const deny = (message: string) => {
      record(toolName, callOptions.toolUseId, input);
      return { behavior: "deny" as const, message };
    };
    if (options.rules.deny.includes(toolName)) return deny(`${toolName} is denied by --disallowed-tools`);
    const tool = byName.get(toolName);
    const readOnly = tool?.isReadOnly(input as never) ?? false;
    if (readOnly || options.mode === "bypassPermissions" || options.rules.allow.includes(toolName)) {
      return { behavior: "allow" };
    }
    if (options.mode === "acceptEdits" && (toolName === "Edit" || toolName === "Write"))
      return { behavior: "allow" };
    if (options.mode === "plan") return deny(`${toolName} is not allowed in plan mode (read-only)`);
    return deny(
      `${toolName} needs permission and this run is headless; allow it with --allowed-tools ${toolName} or --permission-mode bypassPermissions`,
    );
  };
  return { canUseTool, denials: () => [...denials] };
}
