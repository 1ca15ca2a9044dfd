import { analyzeShell } from "./analyze-shell.js";
import { programName } from "./program-name.js";
import { readOnlyVerdict } from "./read-only-commands.js";
import { literalValue, type ShellWord } from "./shell-word.js";

const HARMLESS_WRITE_TARGETS = new Set(["/dev/null", "/dev/stdout", "/dev/stderr"]);

/**
 * Whether every command bash would run is in the read-only table with vetted options and nothing
 * is redirected to a file (R-S2), without looking at the file system: the Bash tool's
 * `isReadOnly`/`isConcurrencySafe` (parallel execution, R-T2). The permission checker judges the
 * same call with the file system too (where each path leads, hard links, git config).
 */
export function isReadOnlyShellCommand(command: string): boolean {
  const analysis = analyzeShell(command);
  if (analysis.opaque.length > 0) return false;
  return analysis.commands.every((part) => {
    const writes = part.redirects.some(
      (redirect) =>
        redirect.access === "write" && !HARMLESS_WRITE_TARGETS.has(literalValue(redirect.target) ?? ""),
    );
    if (writes) return false;
    if (part.wraps) return true;
    if (part.assignments.some((name) => !/^[a-z_][a-z0-9_]*$/.test(name))) return false;
    if (part.words.length === 0) return true;
    const name = programName(part.words[0]);
    if (name === undefined) return false;
    // A glob's matches are file names; one starting with "-" would be an option, so such a glob is not judged here.
    const args: ShellWord[] = part.words
      .slice(1)
      .map((word) =>
        word.kind === "pattern" && !word.text.startsWith("-") && !word.text.includes("{")
          ? { kind: "literal", text: word.text, value: word.text }
          : word,
      );
    if (part.extraArguments) args.push({ kind: "dynamic", text: "(arguments read from stdin)" });
    return readOnlyVerdict(name, args).readOnly;
  });
}
