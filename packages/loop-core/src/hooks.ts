import type { Message } from "./messages.js";
import type { ToolResult, ToolUseContext } from "./tool.js";

export interface PreToolUseInput {
  readonly toolName: string;
  readonly toolInput: Record<string, unknown>;
  readonly toolUseId: string;
  readonly context: ToolUseContext;
}

/** Outcome of a PreToolUse hook. All fields optional: `{}` means "no opinion". */
export interface PreToolUseOutcome {
  /** `allow` skips the permission prompt, `deny` blocks the call, `ask` forces one. */
  readonly decision?: "allow" | "deny" | "ask";
  readonly reason?: string;
  /** Replaces the tool input (validated again against the tool's schema). */
  readonly updatedInput?: Record<string, unknown>;
  /** `false` stops the whole loop after this tool: terminal `hook_stopped` (R-L6). */
  readonly continue?: boolean;
  readonly stopReason?: string;
}

export interface PostToolUseInput extends PreToolUseInput {
  readonly result: ToolResult;
}

export interface PostToolUseOutcome {
  /** Replaces the tool's result (e.g. cleaned output). */
  readonly updatedResult?: ToolResult;
  /** Extra text appended to the tool_result for the model (e.g. a blocking audit message). */
  readonly additionalContext?: string;
  readonly continue?: boolean;
  readonly stopReason?: string;
}

export interface StopHookInput {
  readonly messages: readonly Message[];
  /** True when this stop follows a retry caused by a blocking stop hook (R-L15). */
  readonly stopHookActive: boolean;
  readonly context: ToolUseContext;
}

export interface StopHookOutcome {
  /** Non-empty: appended to history as a user message and the loop continues (R-L15). */
  readonly blockingErrors?: readonly string[];
  /** True: the loop ends with terminal `stop_hook_prevented`. */
  readonly preventContinuation?: boolean;
  readonly stopReason?: string;
}

/**
 * In-process hooks of the loop. Each must not throw: a throw is reported as a hook error and
 * treated as "no opinion". The tools package adapts shell-command hooks from settings to this.
 */
export interface LoopHooks {
  readonly preToolUse?: readonly ((input: PreToolUseInput) => Promise<PreToolUseOutcome>)[];
  readonly postToolUse?: readonly ((input: PostToolUseInput) => Promise<PostToolUseOutcome>)[];
  readonly stop?: readonly ((input: StopHookInput) => Promise<StopHookOutcome>)[];
}
