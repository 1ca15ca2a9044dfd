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
  /**
   * A deny's blocking error as the hook runner words it (a settings hook that exits 2: Claude
   * Code's `[<command>]: <stderr>`); without it the reason stands in. The model gets Claude Code's
   * `PreToolUse:<tool> hook error: <blocking error>` (R-X1).
   */
  readonly blockingError?: string;
  /** Replaces the tool input (validated again against the tool's schema). */
  readonly updatedInput?: Record<string, unknown>;
  /** `false` stops the whole loop after this tool: terminal `hook_stopped` (R-L6). */
  readonly continue?: boolean;
  readonly stopReason?: string;
}

export interface PostToolUseInput extends PreToolUseInput {
  readonly result: ToolResult;
  /** How long the tool's call took, in milliseconds (the Agent SDK's `duration_ms`). */
  readonly durationMs?: number;
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

/** SessionStart: a session began, was resumed, or its history was just compacted. */
export interface SessionStartInput {
  readonly source: "startup" | "resume" | "compact";
  readonly model: string;
  readonly context: ToolUseContext;
  /** `resume`: what the resumed transcript says of its prompt cache (Claude Code's resume fields). */
  readonly resumedCache?: ResumedCache;
}

/**
 * A resumed session's prompt cache, as Claude Code's SessionStart `resume` tells it: how long ago
 * the transcript's last reply came, how many tokens that reply's request held (input + cache reads
 * + cache writes + output), whether the cache has likely expired since, and what writing those
 * tokens to the cache again costs on the session's model.
 */
export interface ResumedCache {
  readonly secondsSinceLastResponse: number;
  readonly contextTokens: number;
  readonly promptCacheLikelyExpired: boolean;
  readonly estimatedCacheWriteUsd: number;
}

export interface SessionStartOutcome {
  /** Text for the model, added to the conversation (Claude Code: stdout / additionalContext). */
  readonly additionalContext?: readonly string[];
}

/** UserPromptSubmit: a prompt is about to start a turn. */
export interface UserPromptSubmitInput {
  readonly prompt: string;
  readonly context: ToolUseContext;
}

export interface UserPromptSubmitOutcome {
  /** Set: the prompt is dropped and the turn does not run (exit code 2, `decision: "block"`). */
  readonly blockReason?: string;
  /** Text for the model, added after the prompt. */
  readonly additionalContext?: readonly string[];
  /** `false`: no turn runs either (`continue: false`). */
  readonly continue?: boolean;
  readonly stopReason?: string;
}

/**
 * What a typed prompt expanded into (Claude Code's UserPromptExpansion): `/name args` run as the
 * custom command `name`. The prompt the model gets is the expansion; the hooks see it as typed.
 */
export interface PromptExpansion {
  readonly expansionType: "slash_command";
  /** The prompt as typed (`/review notes.txt`). */
  readonly typedPrompt: string;
  readonly commandName: string;
  readonly commandArgs: string;
  /** Where the command was read from: `projectSettings` or `userSettings`. */
  readonly commandSource?: string;
}

/** UserPromptExpansion: a typed prompt was expanded (after its UserPromptSubmit). */
export interface UserPromptExpansionInput {
  readonly expansion: PromptExpansion;
  readonly context: ToolUseContext;
}

/** UserPromptExpansion answers as UserPromptSubmit does: block the prompt, or add context after it. */
export type UserPromptExpansionOutcome = UserPromptSubmitOutcome;

/** InstructionsLoaded: a memory file joined the session's instructions (in load order). */
export interface InstructionsLoadedInput {
  readonly filePath: string;
  readonly memoryType: "User" | "Project" | "Local" | "Managed";
  /** `session_start` for a memory file, `include` for a file an `@path` import brought in. */
  readonly loadReason: "session_start" | "include";
  /** The memory file whose import brought this one in. */
  readonly parentFilePath?: string;
  readonly context: ToolUseContext;
}

/** InstructionsLoaded has no control in Claude Code: it only observes. */
export type InstructionsLoadedOutcome = Record<string, never>;

/** SubagentStart: a sub-agent an Agent call started is about to send its first request. */
export interface SubagentStartInput {
  /** `general-purpose` or the agent definition's name. */
  readonly agentType: string;
  /** The Agent call that started it, when there is one. */
  readonly toolUseId?: string;
  readonly context: ToolUseContext;
}

export interface SubagentStartOutcome {
  /** Text for the sub-agent's model, before its task. */
  readonly additionalContext?: readonly string[];
}

/** PreCompact: a compaction is about to run (reactive compaction counts as `auto`). */
export interface PreCompactInput {
  readonly trigger: "manual" | "auto";
  /** A `/compact <text>` argument; empty otherwise. */
  readonly customInstructions: string;
  readonly context: ToolUseContext;
}

/** PostCompact: a compaction succeeded (reactive counts as `auto`), before SessionStart `compact`. */
export interface PostCompactInput {
  readonly trigger: "manual" | "auto";
  /** The summary as the model wrote it. */
  readonly compactSummary: string;
  readonly context: ToolUseContext;
}

/**
 * StopFailure: a sub-agent's run ended on an API error (Claude Code fires it instead of Stop).
 * Its runner fires it, not the loop: a main turn's StopFailure is the host's (the SDK's query).
 */
export interface StopFailureInput {
  readonly apiError: { readonly status: number | null; readonly type: string; readonly message: string };
  /** The error as its assistant message shows it. */
  readonly text: string;
  readonly context: ToolUseContext;
}

/** One call of a PostToolBatch: what it was asked and what the model is sent back. */
export interface PostToolBatchCall {
  readonly toolName: string;
  readonly toolInput: Record<string, unknown>;
  readonly toolUseId: string;
  /** The tool_result's content as the model gets it (text, or blocks). */
  readonly toolResponse: unknown;
}

/** PostToolBatch: every tool call of one reply has its result, before the next request. */
export interface PostToolBatchInput {
  readonly calls: readonly PostToolBatchCall[];
  readonly context: ToolUseContext;
}

/** PostToolBatch audits a reply's calls as a whole; what it says goes to the model with their results. */
export interface PostToolBatchOutcome {
  /** Text for the model, after the batch's results (Claude Code: hookSpecificOutput.additionalContext). */
  readonly additionalContext?: readonly string[];
}

/** PreCompact has no control in Claude Code: it can only observe (and log, back up, …). */
export type PreCompactOutcome = Record<string, never>;

/**
 * In-process hooks of the loop. Each must not throw: a throw is reported as a hook error and
 * treated as "no opinion". The tools package adapts shell-command hooks from settings to this.
 */
export interface LoopHooks {
  readonly preToolUse?: readonly ((input: PreToolUseInput) => Promise<PreToolUseOutcome>)[];
  readonly postToolUse?: readonly ((input: PostToolUseInput) => Promise<PostToolUseOutcome>)[];
  /** After a reply's tool calls all have results (after their PostToolUse), before the next request. */
  readonly postToolBatch?: readonly ((input: PostToolBatchInput) => Promise<PostToolBatchOutcome>)[];
  readonly stop?: readonly ((input: StopHookInput) => Promise<StopHookOutcome>)[];
  /**
   * Session hooks: the loop does not fire these, the runner of a top-level agent does (the
   * orchestrator's main session, a batch item's runner), and PreCompact fires from each agent's
   * context pipeline before it compacts (R-X4).
   */
  readonly sessionStart?: readonly ((input: SessionStartInput) => Promise<SessionStartOutcome>)[];
  readonly userPromptSubmit?: readonly ((input: UserPromptSubmitInput) => Promise<UserPromptSubmitOutcome>)[];
  readonly preCompact?: readonly ((input: PreCompactInput) => Promise<PreCompactOutcome>)[];
  /** Observers only, as PreCompact (fired by the same pipeline after the compaction succeeded). */
  readonly postCompact?: readonly ((input: PostCompactInput) => Promise<PreCompactOutcome>)[];
  /** Observers only: a sub-agent ended on an API error (fired by its runner, R-K2). */
  readonly stopFailure?: readonly ((input: StopFailureInput) => Promise<PreCompactOutcome>)[];
  /** After UserPromptSubmit, when the prompt was a command the host expanded. */
  readonly userPromptExpansion?: readonly ((
    input: UserPromptExpansionInput,
  ) => Promise<UserPromptExpansionOutcome>)[];
  /** Once per memory file as the main session starts, after SessionStart. */
  readonly instructionsLoaded?: readonly ((
    input: InstructionsLoadedInput,
  ) => Promise<InstructionsLoadedOutcome>)[];
  /** Fired by the runner of a sub-agent an Agent call started, before its first request. */
  readonly subagentStart?: readonly ((input: SubagentStartInput) => Promise<SubagentStartOutcome>)[];
}
