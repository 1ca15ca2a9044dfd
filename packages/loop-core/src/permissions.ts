/** Permission modes (R-P1); `dontAsk` denies anything that would have asked. */
export type PermissionMode = "default" | "acceptEdits" | "plan" | "bypassPermissions" | "dontAsk" | "auto";

/**
 * What decided a call (R-K2): Claude Code's `tool_result_meta.permission_decision`, reported on
 * the call's result. `source` names who decided: the configuration (rules, the mode), a hook, or
 * the person or program asked (`user_temporary`, `user_permanent` for an answer that also saved
 * a rule, `user_reject`). `reasonType` is set only when the check decided by itself.
 */
export interface PermissionProvenance {
  readonly source: "config" | "hook" | "user_temporary" | "user_permanent" | "user_reject";
  readonly reasonType?: "rule" | "mode" | "subcommandResults" | "hook" | "other";
  /**
   * A denial of a question nobody could answer (headless, dontAsk): Claude Code reports the call
   * as not run because the user rejected it (`user-rejected`), not as refused by a rule.
   */
  readonly unanswered?: boolean;
}

export type PermissionDecision =
  | {
      readonly behavior: "allow";
      readonly updatedInput?: Record<string, unknown>;
      readonly decidedBy?: PermissionProvenance;
    }
  | {
      readonly behavior: "deny";
      readonly message: string;
      /** Stop the whole loop after this denial (the caller pressed "no, and stop"). */
      readonly interrupt?: boolean;
      readonly decidedBy?: PermissionProvenance;
    };

/**
 * Decides whether one tool call may run. The tools package builds one from modes and rules;
 * an `ask` rule is forwarded to the caller's own CanUseTool. Must not throw: a denial is data.
 * It is asked even when a PreToolUse hook answered `allow` (`approvedByHook`): the hook answers
 * the question a person would be asked, but deny rules and plan mode still hold (R-P1).
 */
export type CanUseTool = (
  toolName: string,
  input: Record<string, unknown>,
  options: {
    readonly signal: AbortSignal;
    readonly toolUseId: string;
    readonly agentId: string;
    /** A PreToolUse hook answered `allow`: do not ask anyone, but refuse what deny rules or the mode refuse. */
    readonly approvedByHook?: boolean;
    /** To an ask caller: why the call needs an answer, in the permission checker's words. */
    readonly reason?: string;
    /** To an ask caller: a rule that would allow such calls from now on (`Bash(npm test:*)`). */
    readonly suggestedRule?: string;
  },
) => Promise<PermissionDecision>;
