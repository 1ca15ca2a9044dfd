/** Claude Code's flags whose value is optional: `--debug`, `--debug hooks`, `--debug=hooks`, `-w NAME`. */
const OPTIONAL_VALUE_FLAGS: Readonly<Record<string, string>> = {
  "-d": "--debug",
  "--debug": "--debug",
  "--prompt-suggestions": "--prompt-suggestions",
  "-w": "--worktree",
  "--worktree": "--worktree",
};

/**
 * Rewrites optional-value flags as `--flag=value` (`--flag=` without one), as Claude Code's
 * parser reads them: the next word is the value unless it is a flag.
 */
export function joinOptionalValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const long = OPTIONAL_VALUE_FLAGS[arg];
    if (long === undefined) {
      out.push(arg);
      continue;
    }
    const next = argv[i + 1];
    if (next !== undefined && !next.startsWith("-")) {
      out.push(`${long}=${next}`);
      i++;
    } else out.push(`${long}=`);
  }
  return out;
}
