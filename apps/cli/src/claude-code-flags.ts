import { CliError } from "./cli-error.js";

/**
 * R-X3: the flags of `claude --help` (Claude Code 2.1.332) that `forkloop run` does not honour.
 * A script switching over must learn at once which flag and why (exit 2, before any request),
 * never read "unknown flag" for a flag Claude Code has. Every other flag of `claude --help` is
 * read by run-flags.ts (test/conformance/claude-cli checks the whole list on the real binary).
 */
export interface RefusedClaudeFlag {
  /** Every spelling Claude Code accepts (`--bg`, `--background`). */
  readonly spellings: readonly string[];
  /** Why forkloop does not honour it, and what to use instead. */
  readonly why: string;
}

const INTERACTIVE = "it belongs to Claude Code's interactive terminal; forkloop run is headless only";

export const REFUSED_CLAUDE_FLAGS: readonly RefusedClaudeFlag[] = [
  {
    spellings: ["--bg", "--background"],
    why: "forkloop has no background sessions to attach to; run it under your shell's job control (`&`) or use `forkloop batch`",
  },
  { spellings: ["--brief"], why: "forkloop has no SendUserMessage tool; the answer is the run's output" },
  { spellings: ["--chrome"], why: "forkloop has no browser integration (Claude in Chrome)" },
  { spellings: ["--cloud"], why: "forkloop runs on this machine only; it has no cloud sessions" },
  { spellings: ["--desktop"], why: "forkloop has no desktop app" },
  { spellings: ["--environment"], why: "forkloop runs on this machine only; it has no cloud environments" },
  {
    spellings: ["--exclude-dynamic-system-prompt-sections"],
    why: "forkloop's per-machine sections are one cached system block every fork shares (R-F3); moving them into the first message would cost its sub-agents that cache",
  },
  {
    spellings: ["--file"],
    why: "forkloop downloads no Files API files at start-up; fetch them before the run and name them in the prompt",
  },
  { spellings: ["--from-pr"], why: "forkloop does not link sessions to pull requests; use --resume SESSION" },
  { spellings: ["--ide"], why: INTERACTIVE },
  {
    spellings: ["--plugin-dir", "--plugin-url"],
    why: "forkloop has no plugins; give skills, agents and commands as project files",
  },
  { spellings: ["--remote-control", "--remote-control-session-name-prefix"], why: INTERACTIVE },
  {
    spellings: ["--system-prompt-snapshot"],
    why: "forkloop builds the system prompt once per run (byte-identical for the session, R-F3) and does not record it across resumes",
  },
  {
    spellings: ["--teleport"],
    why: "forkloop runs on this machine only; it has no cloud sessions to teleport",
  },
  {
    spellings: ["--tmux"],
    why: "forkloop run is headless: it opens no tmux session; --worktree alone runs the session in its worktree",
  },
];

const BY_SPELLING = new Map(REFUSED_CLAUDE_FLAGS.flatMap((flag) => flag.spellings.map((s) => [s, flag])));

/** Refuses the first Claude Code flag forkloop does not honour, naming it and why (exit 2). */
export function refuseClaudeCodeFlags(argv: readonly string[]): void {
  for (const arg of argv) {
    if (arg === "--") return;
    if (!arg.startsWith("-")) continue;
    const spelling = arg.includes("=") ? arg.slice(0, arg.indexOf("=")) : arg;
    const refused = BY_SPELLING.get(spelling);
    if (refused) {
      throw new CliError(`run: ${spelling} is a Claude Code flag forkloop does not support: ${refused.why}.`);
    }
  }
}
