/** Permission modes (R-P1); `dontAsk` denies anything that would have asked. */
export type PermissionMode = "default" | "acceptEdits" | "plan" | "bypassPermissions" | "dontAsk" | "auto";

export type PermissionDecision =
  | { readonly behavior: "allow"; readonly updatedInput?: Record<string, unknown> }
  | {
      readonly behavior: "deny";
      readonly message: string;
      /** Stop the whole loop after this denial (the caller pressed "no, and stop"). */
      readonly interrupt?: boolean;
    };

/**
 * Decides whether one tool call may run. The tools package builds one from modes and rules;
 * an `ask` rule is forwarded to the caller's own CanUseTool. Must not throw: a denial is data.
 */
export type CanUseTool = (
  toolName: string,
  input: Record<string, unknown>,
  options: { readonly signal: AbortSignal; readonly toolUseId: string; readonly agentId: string },
) => Promise<PermissionDecision>;
