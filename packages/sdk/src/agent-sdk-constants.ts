/**
 * The Agent SDK's exported constants, with what they mean for forkloop: its own tool names, the
 * former names it still takes, and the texts of Claude Code's subscription (claude.ai) notices,
 * which a session on an API key — forkloop's only kind — never shows.
 */

/** The built-in tools forkloop offers (the session adds `Agent` and `Skill`, which start forks). */
export const BUILTIN_TOOL_NAMES = [
  "Agent",
  "Bash",
  "Edit",
  "Glob",
  "Grep",
  "LS",
  "NotebookEdit",
  "Read",
  "Skill",
  "TaskStop",
  "TodoWrite",
  "WebFetch",
  "WebSearch",
  "Write",
] as const;

/** Former tool names that rules, hook matchers, `tools` and `disallowedTools` still take. */
export const LEGACY_TOOL_NAME_ALIASES: Readonly<Record<string, string>> = Object.freeze({ Task: "Agent" });

/** Why a session ended, as a SessionEnd hook is told (forkloop fires no SessionEnd). */
export const EXIT_REASONS = ["clear", "resume", "logout", "prompt_input_exit", "other"] as const;
export type ExitReason = (typeof EXIT_REASONS)[number];

/** Starts of subscription usage-limit and organisation-policy notices: none on an API key. */
export const USAGE_LIMIT_ERROR_PREFIXES: readonly string[] = [];
export const USAGE_TRANSITION_PREFIXES: readonly string[] = [];
export const USAGE_WARNING_PREFIXES: readonly string[] = [];
export const ORG_POLICY_LIMIT_PREFIXES: readonly string[] = [];

/**
 * A line of its own in a custom system prompt (or an element of a `string[]` one): what is
 * before it is the part many sessions share, cached for all of them; what is after is this
 * session's own.
 */
export const SYSTEM_PROMPT_DYNAMIC_BOUNDARY = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__";
