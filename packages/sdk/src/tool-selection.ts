import type { Tool } from "@forkloop/loop-core";
import { type BuiltinToolsOptions, createBuiltinTools } from "@forkloop/tools";

/**
 * R-X2: the model query() and `forkloop run` use when none is given — Claude Code's, its newest
 * Opus (what `opus` names). `forkloop batch` keeps its own cheaper default (BATCH_DEFAULT_MODEL).
 */
export const DEFAULT_MODEL = "claude-opus-5-5";

/** Claude Code's rules: `allowedTools` are allow rules, `disallowedTools` deny rules. */
export interface PermissionRules {
  readonly allow: string[];
  readonly ask: string[];
  readonly deny: string[];
}

/**
 * The tools the session adds to the built-in ones: they start forks or message them. `Task` is
 * Claude Code's former name of `Agent`; a bare deny rule naming one removes it
 * (`--disallowed-tools Agent`). `SendMessage` is removable on its own: Claude Code's `--tools
 * Read,Agent` offers Agent without it (R-X3).
 */
export const FORK_TOOL_NAMES: readonly string[] = ["Agent", "Task", "SendMessage", "Skill"];

/** A fork tool the session can leave out. */
export type RemovableForkTool = "Agent" | "SendMessage" | "Skill";

/**
 * The fork tools a session leaves out: those a list of deny rules removes — `Agent` (also by
 * `Task`), `SendMessage` (also with Agent: it only messages the sub-agents Agent starts) and
 * `Skill` — and, when the program names its tool set (the `tools` option as a list), those it
 * does not name. The Agent SDK passes that list as Claude Code's `--tools`, where the list is the
 * whole set: `tools: ["Read"]` offers Read alone, no Agent or SendMessage (R-X3, R-K2).
 */
export function removedForkTools(
  deny: readonly string[],
  selection?: readonly string[],
): RemovableForkTool[] {
  const bare = new Set(deny.filter((rule) => !rule.includes("(")));
  const unnamed = (...names: string[]) =>
    selection !== undefined && !names.some((name) => selection.includes(name));
  const agent = bare.has("Agent") || bare.has("Task") || unnamed("Agent", "Task");
  return [
    ...(agent ? (["Agent"] as const) : []),
    ...(agent || bare.has("SendMessage") || unnamed("SendMessage") ? (["SendMessage"] as const) : []),
    ...(bare.has("Skill") || unnamed("Skill") ? (["Skill"] as const) : []),
  ];
}

/** Names of the built-in tools (R-T3), as the model sees them. */
export function builtinToolNames(): string[] {
  return createBuiltinTools().map((tool) => tool.name);
}

/**
 * The built-in tools offered to the model: all of them minus those a bare deny rule names
 * (`--disallowed-tools Bash` removes Bash; `Bash(rm:*)` only denies matching calls). The deny
 * rules also go to the tools, so Grep/Glob/LS leave out files a path rule hides (R-P1:
 * `Read(./.env)` must stop `Grep SECRET .` too, which the per-call checker cannot see).
 */
export function selectTools(
  deny: readonly string[] = [],
  bash: Pick<BuiltinToolsOptions, "bashSandbox" | "bashEnv"> = {},
): Tool[] {
  const removed = new Set(deny.filter((rule) => !rule.includes("(")));
  return createBuiltinTools({ denyRules: deny, ...bash }).filter((tool) => !removed.has(tool.name));
}
