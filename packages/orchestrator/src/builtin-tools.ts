import type { CanUseTool, PermissionMode, Tool } from "@forkloop/loop-core";
import * as toolsPackage from "@forkloop/tools";
import type { PermissionRules } from "./sub-agent-types.js";

// TEMPORARY bridge while @forkloop/tools lands its pinned API (createBuiltinTools,
// createPermissionChecker): use them when exported, otherwise the tool objects it exports and
// an allow-list check. Replaced by direct imports once both exist.
const exported = toolsPackage as unknown as Record<string, unknown>;

function isTool(value: unknown): value is Tool {
  return (
    typeof value === "object" &&
    value !== null &&
    "name" in value &&
    "inputSchema" in value &&
    "call" in value
  );
}

export function builtinTools(): Tool[] {
  const factory = exported.createBuiltinTools;
  if (typeof factory === "function") return (factory as () => Tool[])();
  return Object.values(exported).filter(isTool);
}

export function permissionChecker(options: {
  mode: PermissionMode;
  rules: PermissionRules;
  tools: readonly Tool[];
  askCaller?: CanUseTool;
}): CanUseTool {
  const factory = exported.createPermissionChecker;
  if (typeof factory === "function") {
    return (factory as (o: unknown) => CanUseTool)({
      mode: options.mode,
      rules: { allow: [...options.rules.allow], ask: [...options.rules.ask], deny: [...options.rules.deny] },
      tools: options.tools,
      ...(options.askCaller === undefined ? {} : { askCaller: options.askCaller }),
    });
  }
  return async (toolName, input, callOptions) => {
    if (options.rules.deny.includes(toolName))
      return { behavior: "deny", message: `${toolName} is denied by a rule` };
    if (options.rules.ask.includes(toolName) && options.mode !== "bypassPermissions") {
      return options.askCaller
        ? options.askCaller(toolName, input, callOptions)
        : { behavior: "deny", message: `${toolName} needs permission` };
    }
    return { behavior: "allow" };
  };
}
