import { CLAUDE_CODE_HOOK_EVENTS } from "@forkloop/tools";
import type { ExitReason } from "../agent-sdk-constants.js";
import type { McpServerProvenance } from "./control-types.js";
import type { PermissionUpdate } from "./option-types.js";
import type { SDKAssistantMessageError } from "./other-messages.js";

/**
 * The Agent SDK's hook events, inputs and outputs. Every event the Agent SDK knows is accepted
 * in the `hooks` option (so a program registering them compiles and runs unchanged); forkloop
 * fires those in FIRED_HOOK_EVENTS, and names the others once on `stderr`.
 */
// The Agent SDK's list is Claude Code's (the same release); settings files accept it too.
export const HOOK_EVENTS = CLAUDE_CODE_HOOK_EVENTS;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** The events forkloop fires (the rest of HOOK_EVENTS are accepted and named as not fired). */
export const FIRED_HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "UserPromptSubmit",
  "UserPromptExpansion",
  "InstructionsLoaded",
  "SessionStart",
  "SessionEnd",
  "Stop",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "StopFailure",
  "PermissionRequest",
] as const satisfies readonly HookEvent[];
export type FiredHookEvent = (typeof FIRED_HOOK_EVENTS)[number];

/** What every hook input carries. */
export interface BaseHookInput {
  session_id: string;
  transcript_path: string;
  cwd: string;
  prompt_id?: string;
  permission_mode?: string;
  agent_id?: string;
  agent_type?: string;
  effort?: { level: string };
}

/** In-flight background work and scheduled wake-ups, as Stop hooks are told of them. */
export interface BackgroundTaskSummary {
  id: string;
  type: string;
  status: string;
  description: string;
  command?: string;
  agent_type?: string;
  server?: string;
  tool?: string;
  name?: string;
}
export interface SessionCronSummary {
  id: string;
  schedule: string;
  recurring: boolean;
  prompt: string;
}

type Input<Event extends HookEvent, Fields> = BaseHookInput & { hook_event_name: Event } & Fields;
type ToolCall = { tool_name: string; tool_input: unknown; tool_use_id: string };
type ModelSwitch = {
  from_model: string;
  to_model: string;
  requested_model: string | null;
  context_tokens: number;
  prompt_cache_warm: boolean;
  cache_ttl: "5m" | "1h";
  estimated_cache_write_usd: number;
  pricing: "configured" | "catalog" | "default";
};
type TaskEvent = {
  task_id: string;
  task_subject: string;
  task_description?: string;
  teammate_name?: string;
  team_name?: string;
};
type Ending = {
  stop_hook_active: boolean;
  last_assistant_message?: string;
  background_tasks?: BackgroundTaskSummary[];
  session_crons?: SessionCronSummary[];
};

export interface PostToolBatchToolCall {
  tool_name: string;
  tool_input: unknown;
  tool_use_id: string;
  tool_response?: unknown;
}

export type PreToolUseHookInput = Input<"PreToolUse", ToolCall & { mcp_server?: McpServerProvenance }>;
export type PostToolUseHookInput = Input<
  "PostToolUse",
  ToolCall & { tool_response: unknown; duration_ms?: number; mcp_server?: McpServerProvenance }
>;
export type PostToolUseFailureHookInput = Input<
  "PostToolUseFailure",
  ToolCall & { error: string; is_interrupt?: boolean; duration_ms?: number; mcp_server?: McpServerProvenance }
>;
export type PostToolBatchHookInput = Input<"PostToolBatch", { tool_calls: PostToolBatchToolCall[] }>;
export type PermissionDeniedHookInput = Input<
  "PermissionDenied",
  ToolCall & { reason: string; mcp_server?: McpServerProvenance }
>;
export type NotificationHookInput = Input<
  "Notification",
  { message: string; title?: string; notification_type: string }
>;
export type UserPromptSubmitHookInput = Input<
  "UserPromptSubmit",
  {
    prompt: string;
    source?: "user" | "sdk" | "system" | "loop_wakeup" | "schedule_wakeup" | "poll_event";
    session_title?: string;
  }
>;
export type UserPromptExpansionHookInput = Input<
  "UserPromptExpansion",
  {
    expansion_type: "slash_command" | "mcp_prompt";
    command_name: string;
    command_args: string;
    command_source?: string;
    prompt: string;
  }
>;
export type SessionStartHookInput = Input<
  "SessionStart",
  {
    source: "startup" | "resume" | "clear" | "compact" | "fork";
    agent_type?: string;
    model?: string;
    session_title?: string;
    seconds_since_last_response?: number;
    context_tokens?: number;
    prompt_cache_likely_expired?: boolean;
    estimated_cache_write_usd?: number;
  }
>;
export type SessionEndHookInput = Input<"SessionEnd", { reason: ExitReason }>;
export type StopHookInput = Input<"Stop", Ending>;
export type StopFailureHookInput = Input<
  "StopFailure",
  { error: SDKAssistantMessageError; error_details?: string; last_assistant_message?: string }
>;
export type SubagentStartHookInput = Input<"SubagentStart", { agent_id: string; agent_type: string }>;
export type SubagentStopHookInput = Input<
  "SubagentStop",
  Ending & { agent_id: string; agent_transcript_path: string; agent_type: string }
>;
export type PreCompactHookInput = Input<
  "PreCompact",
  { trigger: "manual" | "auto"; custom_instructions: string | null }
>;
export type PostCompactHookInput = Input<
  "PostCompact",
  { trigger: "manual" | "auto"; compact_summary: string }
>;
export type PreModelSwitchHookInput = Input<
  "PreModelSwitch",
  ModelSwitch & { source: "command" | "picker" | "sdk" }
>;
export type PostModelSwitchHookInput = Input<
  "PostModelSwitch",
  ModelSwitch & { source: "command" | "picker" | "sdk" | "auto" | "resume" }
>;
export type PermissionRequestHookInput = Input<
  "PermissionRequest",
  {
    tool_name: string;
    tool_input: unknown;
    permission_suggestions?: PermissionUpdate[];
    mcp_server?: McpServerProvenance;
  }
>;
export type SetupHookInput = Input<"Setup", { trigger: "init" | "maintenance" }>;
export type TeammateIdleHookInput = Input<"TeammateIdle", { teammate_name: string; team_name: string }>;
export type TaskCreatedHookInput = Input<"TaskCreated", TaskEvent>;
export type TaskCompletedHookInput = Input<"TaskCompleted", TaskEvent>;
export type ElicitationHookInput = Input<
  "Elicitation",
  {
    mcp_server_name: string;
    message: string;
    mode?: "form" | "url";
    url?: string;
    elicitation_id?: string;
    requested_schema?: Record<string, unknown>;
  }
>;
export type ElicitationResultHookInput = Input<
  "ElicitationResult",
  {
    mcp_server_name: string;
    elicitation_id?: string;
    mode?: "form" | "url";
    action: "accept" | "decline" | "cancel";
    content?: Record<string, unknown>;
  }
>;
export type ConfigChangeHookInput = Input<
  "ConfigChange",
  {
    source: "user_settings" | "project_settings" | "local_settings" | "policy_settings" | "skills";
    file_path?: string;
  }
>;
export type InstructionsLoadedHookInput = Input<
  "InstructionsLoaded",
  {
    file_path: string;
    memory_type: "User" | "Project" | "Local" | "Managed";
    load_reason: "session_start" | "nested_traversal" | "path_glob_match" | "include" | "compact";
    globs?: string[];
    trigger_file_path?: string;
    parent_file_path?: string;
  }
>;
export type WorktreeCreateHookInput = Input<"WorktreeCreate", { name: string }>;
export type WorktreeRemoveHookInput = Input<"WorktreeRemove", { worktree_path: string }>;
export type CwdChangedHookInput = Input<"CwdChanged", { old_cwd: string; new_cwd: string }>;
export type FileChangedHookInput = Input<
  "FileChanged",
  { file_path: string; event: "change" | "add" | "unlink" }
>;
export type DirectoryAddedHookInput = Input<
  "DirectoryAdded",
  { directory: string; source: "slash_command" | "register_repo_root" }
>;
export type MessageDisplayHookInput = Input<
  "MessageDisplay",
  { turn_id: string; message_id: string; index: number; final: boolean; delta: string }
>;
export type PreSkillShellCommandHookInput = Input<
  "PreSkillShellCommand",
  {
    tool_name: string;
    tool_input: { command: string };
    tool_use_id: string;
    command_name: string;
    command_source?: string;
    invoked_by: "user" | "claude" | "other";
  }
>;

export type HookInput =
  | PreToolUseHookInput
  | PostToolUseHookInput
  | PostToolUseFailureHookInput
  | PostToolBatchHookInput
  | PermissionDeniedHookInput
  | NotificationHookInput
  | UserPromptSubmitHookInput
  | UserPromptExpansionHookInput
  | SessionStartHookInput
  | SessionEndHookInput
  | StopHookInput
  | StopFailureHookInput
  | SubagentStartHookInput
  | SubagentStopHookInput
  | PreCompactHookInput
  | PostCompactHookInput
  | PreModelSwitchHookInput
  | PostModelSwitchHookInput
  | PermissionRequestHookInput
  | SetupHookInput
  | TeammateIdleHookInput
  | TaskCreatedHookInput
  | TaskCompletedHookInput
  | ElicitationHookInput
  | ElicitationResultHookInput
  | ConfigChangeHookInput
  | InstructionsLoadedHookInput
  | WorktreeCreateHookInput
  | WorktreeRemoveHookInput
  | CwdChangedHookInput
  | FileChangedHookInput
  | DirectoryAddedHookInput
  | MessageDisplayHookInput
  | PreSkillShellCommandHookInput;

export type HookPermissionDecision = "allow" | "deny" | "ask" | "defer";
export type PermissionDecisionClassification = "user_temporary" | "user_permanent" | "user_reject";

type Context<Event extends HookEvent> = { hookEventName: Event; additionalContext?: string };
type Watch<Event extends HookEvent> = { hookEventName: Event; watchPaths?: string[] };
type Elicit<Event extends HookEvent> = {
  hookEventName: Event;
  action?: "accept" | "decline" | "cancel";
  content?: Record<string, unknown>;
};

export type PreToolUseHookSpecificOutput = {
  hookEventName: "PreToolUse";
  permissionDecision?: HookPermissionDecision;
  permissionDecisionReason?: string;
  updatedInput?: Record<string, unknown>;
  additionalContext?: string;
};
export type UserPromptSubmitHookSpecificOutput = Context<"UserPromptSubmit"> & {
  sessionTitle?: string;
  suppressOriginalPrompt?: boolean;
};
export type UserPromptExpansionHookSpecificOutput = Context<"UserPromptExpansion"> & {
  suppressOriginalPrompt?: boolean;
};
export type SessionStartHookSpecificOutput = Context<"SessionStart"> & {
  initialUserMessage?: string;
  sessionTitle?: string;
  watchPaths?: string[];
  reloadSkills?: boolean;
};
export type SetupHookSpecificOutput = Context<"Setup">;
export type PreModelSwitchHookSpecificOutput = {
  hookEventName: "PreModelSwitch";
  permissionDecision?: "allow" | "deny" | "ask";
  permissionDecisionReason?: string;
};
export type PostModelSwitchHookSpecificOutput = Context<"PostModelSwitch">;
export type SubagentStartHookSpecificOutput = Context<"SubagentStart">;
export type PostToolUseHookSpecificOutput = Context<"PostToolUse"> & {
  classifierContext?: string;
  updatedToolOutput?: unknown;
  updatedMCPToolOutput?: unknown;
};
export type PostToolUseFailureHookSpecificOutput = Context<"PostToolUseFailure">;
export type PostToolBatchHookSpecificOutput = Context<"PostToolBatch">;
export type StopHookSpecificOutput = Context<"Stop">;
export type SubagentStopHookSpecificOutput = Context<"SubagentStop">;
export type PermissionDeniedHookSpecificOutput = { hookEventName: "PermissionDenied"; retry?: boolean };
export type NotificationHookSpecificOutput = Context<"Notification">;
export type PermissionRequestHookSpecificOutput = {
  hookEventName: "PermissionRequest";
  decision:
    | { behavior: "allow"; updatedInput?: Record<string, unknown>; updatedPermissions?: PermissionUpdate[] }
    | { behavior: "deny"; message?: string; interrupt?: boolean };
};
export type ElicitationHookSpecificOutput = Elicit<"Elicitation">;
export type ElicitationResultHookSpecificOutput = Elicit<"ElicitationResult">;
export type CwdChangedHookSpecificOutput = Watch<"CwdChanged">;
export type FileChangedHookSpecificOutput = Watch<"FileChanged">;
export type WorktreeCreateHookSpecificOutput = { hookEventName: "WorktreeCreate"; worktreePath: string };
export type MessageDisplayHookSpecificOutput = { hookEventName: "MessageDisplay"; displayContent?: string };
export type PreSkillShellCommandHookSpecificOutput = {
  hookEventName: "PreSkillShellCommand";
  permissionDecision?: HookPermissionDecision;
  permissionDecisionReason?: string;
  updatedInput?: Record<string, unknown>;
};

/** A callback's answer, read at once (forkloop reads the fields its fired events use). */
export interface SyncHookJSONOutput {
  continue?: boolean;
  suppressOutput?: boolean;
  stopReason?: string;
  decision?: "approve" | "block";
  systemMessage?: string;
  terminalSequence?: string;
  reason?: string;
  hookSpecificOutput?:
    | PreToolUseHookSpecificOutput
    | UserPromptSubmitHookSpecificOutput
    | UserPromptExpansionHookSpecificOutput
    | SessionStartHookSpecificOutput
    | SetupHookSpecificOutput
    | PreModelSwitchHookSpecificOutput
    | PostModelSwitchHookSpecificOutput
    | SubagentStartHookSpecificOutput
    | PostToolUseHookSpecificOutput
    | PostToolUseFailureHookSpecificOutput
    | PostToolBatchHookSpecificOutput
    | StopHookSpecificOutput
    | SubagentStopHookSpecificOutput
    | PermissionDeniedHookSpecificOutput
    | NotificationHookSpecificOutput
    | PermissionRequestHookSpecificOutput
    | ElicitationHookSpecificOutput
    | ElicitationResultHookSpecificOutput
    | CwdChangedHookSpecificOutput
    | FileChangedHookSpecificOutput
    | WorktreeCreateHookSpecificOutput
    | MessageDisplayHookSpecificOutput
    | PreSkillShellCommandHookSpecificOutput;
}

/** "Carry on; my work finishes in the background": no opinion on the event. */
export interface AsyncHookJSONOutput {
  async: true;
  asyncTimeout?: number;
}

export type HookJSONOutput = AsyncHookJSONOutput | SyncHookJSONOutput;

export type HookCallback = (
  input: HookInput,
  toolUseID: string | undefined,
  options: { signal: AbortSignal },
) => Promise<HookJSONOutput>;

export interface HookCallbackMatcher {
  /** A tool-name pattern for the tool events (`Bash`, `Edit|Write`, `mcp__.*`); default all. */
  matcher?: string;
  hooks: HookCallback[];
  /** Seconds before a callback is abandoned (its answer then counts as "no opinion"). */
  timeout?: number;
  /** What a callback that throws means: forkloop reads it as "no opinion" (`continue`). */
  onFailure?: "continue" | "block";
}
