import type { CanUseTool, PermissionMode, Tool } from "@forkloop/loop-core";
import { createPermissionChecker } from "@forkloop/tools";
import type { PermissionDenialRecord } from "./stream-json-writer.js";
import type { PermissionRules } from "./tool-selection.js";

/**
 * Tools the orchestrator's session adds (not built-ins): those that fork a sub-agent, and
 * SendMessage, which messages a background one (R-T5).
 */
const FORK_TOOLS = new Set(["Agent", "Task", "Skill", "SendMessage"]);

/**
 * Permissions of a headless run (R-P1), from @forkloop/tools' checker (modes + Claude Code rule
 * syntax). Nobody can answer an "ask" here, so there is no ask caller: whatever would ask is
 * denied with a message saying how to allow it, and every denial is reported in the result line
 * (`permission_denials`), like Claude Code. Forking a sub-agent needs no approval of its own
 * (the sub-agent's tool calls are checked) unless a deny rule names the fork tool.
 */
export function createHeadlessPermissions(options: {
  /** The mode, or where to read it at each call (a session's live mode, R-S14). */
  mode: PermissionMode | (() => PermissionMode);
  rules: PermissionRules;
  tools: readonly Tool[];
  cwd: string;
  /** The run's HOME (the user's own files are judged by it, R-S10); default `os.homedir()`. */
  home?: string | undefined;
  /**
   * Who answers what would ask (a library's `canUseTool`); without one it is denied. Asked only
   * after hooks, deny rules, the mode and allow rules have not decided (the Agent SDK's order).
   */
  ask?: CanUseTool;
  /**
   * A call refused because nobody could answer its question (no canUseTool, dontAsk): the Agent
   * SDK announces it with a `system/permission_denied` message before the call's result (R-K2).
   */
  onUnanswered?: (denial: { toolName: string; toolUseId: string; agentId: string; message: string }) => void;
}): {
  canUseTool: CanUseTool;
  denials(): PermissionDenialRecord[];
  /** Records a denial decided elsewhere (a PreToolUse hook's deny), as the Agent SDK lists it. */
  recordDenial(toolName: string, toolUseId: string, input: Record<string, unknown>): void;
} {
  const denials: PermissionDenialRecord[] = [];
  const record = (toolName: string, toolUseId: string, input: Record<string, unknown>) =>
    denials.push({ tool_name: toolName, tool_use_id: toolUseId, tool_input: input });
  const checker = createPermissionChecker({
    mode: options.mode,
    rules: options.rules,
    tools: options.tools,
    cwd: options.cwd,
    ...(options.home === undefined ? {} : { home: options.home }),
    ...(options.ask === undefined ? {} : { askCaller: options.ask }),
    onDenial: (denial) => record(denial.toolName, denial.toolUseId, denial.input),
  });
  const canUseTool: CanUseTool = async (toolName, input, callOptions) => {
    if (!FORK_TOOLS.has(toolName)) {
      const decision = await checker(toolName, input, callOptions);
      if (decision.behavior === "deny" && decision.decidedBy?.unanswered === true) {
        const { toolUseId, agentId } = callOptions;
        options.onUnanswered?.({ toolName, toolUseId, agentId, message: decision.message });
      }
      return decision;
    }
    if (options.rules.deny.includes(toolName)) {
      record(toolName, callOptions.toolUseId, input);
      return {
        behavior: "deny",
        message: `${toolName} is denied by a deny rule (--disallowed-tools or settings)`,
        decidedBy: { source: "config", reasonType: "rule" },
      };
    }
    // R-K2: allowed by a rule when one names it; else the tool allows itself (no reason given).
    const ruled = options.rules.allow.includes(toolName);
    return {
      behavior: "allow",
      decidedBy: ruled ? { source: "config", reasonType: "rule" } : { source: "config" },
    };
  };
  return {
    canUseTool,
    denials: () => [...denials],
    recordDenial: record,
  };
}
