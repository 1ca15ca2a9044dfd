/**
 * Options of the Claude Agent SDK that `query()` accepts but does not act on yet: a program
 * written against the Agent SDK that sets them compiles unchanged, and at run time they are
 * ignored with one warning naming them (R-K1; the README lists what each would do).
 * The process options (`executable`, `pathToClaudeCodeExecutable`, `spawnClaudeCodeProcess`, …)
 * have no meaning here: there is no Claude Code process.
 */
export interface AgentSdkOnlyOptions {
  agent?: string;
  debug?: boolean;
  debugFile?: string;
  enableFileCheckpointing?: boolean;
  executable?: "bun" | "deno" | "node";
  executableArgs?: string[];
  pathToClaudeCodeExecutable?: string;
  persistSession?: boolean;
  plugins?: { type: "local"; path: string }[];
  resumeSessionAt?: string;
  skills?: string[] | "all";
  spawnClaudeCodeProcess?: (options: never) => unknown;
  taskBudget?: { total: number };
  title?: string;
}
