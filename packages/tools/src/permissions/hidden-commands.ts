import { analyzeShell, type ShellCommand } from "../shell/analyze-shell.js";
import { programName } from "../shell/program-name.js";
import { readOnlyVerdict } from "../shell/read-only-commands.js";
import { literalValue, type ShellWord } from "../shell/shell-word.js";
import { type CommandSpecifier, commandMatchesRule } from "./bash-rule-match.js";

/** Commands that print or look up their arguments and never run them. */
const NEVER_RUN_ARGUMENTS = new Set(["echo", "printf", "which", "type", "whereis", "help"]);
/** How deep a script found in a word is searched for more scripts. */
const MAX_DEPTH = 2;
/** Longer words are searched whole only (the parse of each is cheap, but not free). */
const MAX_SCRIPT_LENGTH = 4_000;

export interface HiddenCommand {
  /** The deny rule it matches. */
  readonly rule: string;
  /** Where it was found, for the message. */
  readonly where: string;
}

/**
 * A command a deny rule covers, hidden where the walk does not look (R-S1, R-S3). Past
 * the wrappers it unwraps, many programs run their arguments (`strace rm x`, `chroot / rm x`,
 * `parallel rm ::: x`, `su -c 'rm x'`, `gdb -ex 'shell rm x'`) or run a variable's or an option's
 * value as a command (`GIT_EXTERNAL_DIFF='rm x' git diff`, `git -c alias.x='!rm x' x`,
 * `alias ls=rm`), and a copy of the program runs under another name (`cp /bin/rm r`). So, for a
 * deny rule: every later literal word of a command that is not known to only read is also tried
 * as the start of a command, and every literal word or assigned value that parses as a shell
 * script (also after a `NAME=` or `!`) is searched for a command the rule covers.
 */
export function hiddenDeniedCommand(
  commands: readonly ShellCommand[],
  denyRules: readonly { readonly raw: string; readonly specifier: CommandSpecifier }[],
): HiddenCommand | undefined {
  if (denyRules.length === 0) return undefined;
  const matching = (part: ShellCommand): string | undefined =>
    denyRules.find((rule) => commandMatchesRule(rule.specifier, part, "deny"))?.raw;
  const search = (parts: readonly ShellCommand[], depth: number): HiddenCommand | undefined => {
    for (const part of parts) {
      const name = programName(part.words[0]);
      // `cat /bin/rm > r` makes a copy of the program under another name: not only a read.
      const onlyReads =
        name !== undefined &&
        (NEVER_RUN_ARGUMENTS.has(name) ||
          (!part.redirects.some((redirect) => redirect.access === "write") &&
            readOnlyVerdict(name, part.words.slice(1)).readOnly));
      // `git rm x` is git's own subcommand, not the program rm.
      const from = onlyReads || name === "git" ? part.words.length : 1;
      for (let index = from; index < part.words.length; index++) {
        if (part.words[index]?.kind !== "literal") continue;
        const rest = { ...part, words: part.words.slice(index), assignments: [], redirects: [] };
        const rule = matching(rest);
        if (rule !== undefined)
          return { rule, where: `${literalValue(part.words[index])} in ${name}'s arguments` };
      }
      if (depth >= MAX_DEPTH) continue;
      // A single word is already tried above; a value a program runs (`GIT_EXTERNAL_DIFF=rm`) is not.
      const texts = [
        ...(onlyReads ? [] : name === "git" ? gitConfigValues(part.words) : part.words.slice(1)).flatMap(
          (word) => {
            const value = literalValue(word);
            return value === undefined || !/[\s;&|=!]/.test(value) ? [] : [value];
          },
        ),
        ...(part.assignedValues ?? []),
      ];
      for (const text of texts) {
        for (const script of scriptsIn(text)) {
          // A script names a program plainly or by an absolute path; `s/rm -rf/x/` is a sed script.
          const inner = analyzeShell(script).commands.filter((each) => {
            const program = literalValue(each.words[0]);
            return program === undefined || !program.includes("/") || program.startsWith("/");
          });
          const direct = inner.map((each) => ({ each, rule: matching(each) })).find((found) => found.rule);
          if (direct?.rule !== undefined)
            return { rule: direct.rule, where: `the value ${JSON.stringify(text)}` };
          const deeper = search(inner, depth + 1);
          if (deeper !== undefined) return deeper;
        }
      }
    }
    return undefined;
  };
  return search(commands, 1);
}

/**
 * git runs what its `-c` values name (`alias.x=!rm x`, `core.pager=…`); its other words are
 * messages and paths (`git commit -m "drop the rm step"` runs no rm).
 */
function gitConfigValues(words: readonly ShellWord[]): ShellWord[] {
  const values: ShellWord[] = [];
  for (let index = 1; index < words.length - 1; index++) {
    const value = literalValue(words[index]);
    if (value === undefined || !value.startsWith("-")) break;
    if (value === "-c" || value === "-C") {
      if (value === "-c") values.push(words[index + 1] as ShellWord);
      index++;
    }
  }
  return values;
}

/**
 * The texts in one value that a program may run as a script: all of it, what follows a `=` or a
 * `!`, and each quoted string inside it (`awk 'BEGIN { system("rm x") }'`,
 * `python3 -c 'os.system("rm x")'`: an interpreter's code passes a command on as a string).
 */
function scriptsIn(text: string): string[] {
  if (text.length > MAX_SCRIPT_LENGTH) return [text];
  const scripts = new Set<string>([text]);
  for (const match of text.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|`([^`]*)`/g)) {
    const quoted = match[1] ?? match[2] ?? match[3] ?? "";
    if (/\s/.test(quoted)) scripts.add(quoted);
    if (scripts.size > 12) break;
  }
  for (const match of text.matchAll(/[=!]+/g)) {
    const rest = text.slice((match.index ?? 0) + match[0].length);
    if (rest.length > 0) scripts.add(rest);
    if (scripts.size > 4) break;
  }
  return [...scripts];
}
