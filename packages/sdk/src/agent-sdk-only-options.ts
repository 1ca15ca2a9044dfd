import { OptionsError } from "./options-error.js";

/**
 * Options of the Claude Agent SDK that forkloop reads only to say what they do here (R-K1): a
 * program written against the Agent SDK compiles unchanged, and none of them changes behaviour
 * silently — each is acted on (`agent`, `debug`, `persistSession`, `title`, `taskBudget`), has no effect by nature (the process
 * options: there is no Claude Code process to choose), or is refused at the `query()` call by an
 * OptionsError naming it and what to do instead (`checkAgentSdkOnlyOptions`).
 */
export interface AgentSdkOnlyOptions {
  /** The main session runs as this agent type (its prompt, tools and model), as `forkloop run --agent` (`main-agent.ts`). */
  agent?: string;
  /** `forkloop run --debug`'s lines (tool calls, retries, compactions) on `stderr` (`debug-log.ts`). */
  debug?: boolean;
  /** The same lines appended to this file (relative to `cwd`), as `--debug-file`. */
  debugFile?: string;
  /** Accepted; `rewindFiles()` answers `canRewind: false` with the reason (no checkpoints). */
  enableFileCheckpointing?: boolean;
  /** No effect: there is no Claude Code process to run. */
  executable?: "bun" | "deno" | "node";
  /** No effect: there is no Claude Code process to run. */
  executableArgs?: string[];
  /** No effect: there is no Claude Code process to run. */
  pathToClaudeCodeExecutable?: string;
  /** false: nothing kept on disk, the session cannot be resumed (`--no-session-persistence`). */
  persistSession?: boolean;
  /** Refused unless empty: forkloop has no plugins. */
  plugins?: { type: "local"; path: string }[];
  /** With `resume` and `forkSession`: the fork keeps the history up to this message; otherwise refused. */
  resumeSessionAt?: string;
  /**
   * `"all"` (forkloop's default): every skill found. A list: only those skills (by name), in the
   * model's listing and the Skill tool's; `[]`: none. A filter of what the session offers, not a
   * sandbox: the skills' files stay readable.
   */
  skills?: string[] | "all";
  /** No effect: there is no Claude Code process to spawn. */
  spawnClaudeCodeProcess?: (options: never) => unknown;
  /** R-L3: sent as `output_config.task_budget` (its beta too) by the main agent and every sub-agent. */
  taskBudget?: { total: number };
  /** A new (or forked) session's title, as `renameSession` sets it; a resumed session keeps its own. */
  title?: string;
}

/** Options forkloop cannot honour: why, and what to do instead; undefined when the value is harmless. */
const REFUSED: {
  readonly [K in keyof AgentSdkOnlyOptions]?: (
    value: NonNullable<AgentSdkOnlyOptions[K]>,
  ) => string | undefined;
} = {
  plugins: (plugins) =>
    plugins.length === 0
      ? undefined
      : "plugins: forkloop has no plugins; give their skills, agents and commands as project files (.claude/skills, .claude/agents, .claude/commands) or their MCP servers as mcpServers.",
  taskBudget: (budget) =>
    Number.isInteger(budget.total) && budget.total > 0
      ? undefined
      : `taskBudget ${JSON.stringify(budget)}: give total as a positive whole number of tokens.`,
};

/**
 * R-K1: refuses, by an OptionsError naming them and what to do instead, the Agent SDK options
 * forkloop cannot honour (never a silent change of behaviour).
 */
export function checkAgentSdkOnlyOptions(
  options: AgentSdkOnlyOptions & { resume?: string; continue?: boolean; forkSession?: boolean },
): void {
  const problems = (Object.keys(REFUSED) as (keyof AgentSdkOnlyOptions)[]).flatMap((key) => {
    const value = options[key];
    if (value === undefined) return [];
    const problem = (REFUSED[key] as (value: unknown) => string | undefined)(value);
    return problem === undefined ? [] : [problem];
  });
  if (
    options.resumeSessionAt !== undefined &&
    (options.resume === undefined || options.forkSession !== true)
  ) {
    problems.push(
      `resumeSessionAt "${options.resumeSessionAt}": forkloop never cuts a saved transcript; with resume, add forkSession: true to continue from that message in a new session (the original kept whole).`,
    );
  }
  if (options.persistSession === false && (options.resume !== undefined || options.continue === true)) {
    problems.push(
      "persistSession: false with resume or continue: forkloop writes a resumed session's new turns to its transcript; drop persistSession: false or start a new session.",
    );
  }
  if (problems.length > 0) throw new OptionsError(problems.join("\n"));
}
