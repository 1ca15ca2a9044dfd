import { re2 } from "../patterns/re2.js";
import { analyzeShell, type ShellCommand } from "../shell/analyze-shell.js";
import { denyName, programName } from "../shell/program-name.js";
import { displayWord, literalValue, type ShellWord } from "../shell/shell-word.js";

/** The Bash specifiers of permission rules (`Bash(git status)`, `Bash(npm test:*)`, `Bash(npm run *)`). */
export type CommandSpecifier =
  | { readonly type: "command-exact"; readonly command: string }
  | { readonly type: "command-prefix"; readonly prefix: string }
  | { readonly type: "command-wildcard"; readonly pattern: string };

/**
 * Environment names a command may set and still match an allow rule (`CI=1 npm test` under
 * `Bash(npm test:*)`); anything else (`LD_PRELOAD=…`, `GIT_EXTERNAL_DIFF=…`, `PATH=…`) changes what
 * the command runs, so the rule does not cover it.
 */
const HARMLESS_ENVIRONMENT = new Set([
  "CI",
  "NODE_ENV",
  "FORCE_COLOR",
  "NO_COLOR",
  "TZ",
  "LANG",
  "LC_ALL",
  "TERM",
  "DEBUG",
  "RUST_BACKTRACE",
  "PYTHONUNBUFFERED",
  "VERBOSE",
]);

const ruleWordsCache = new Map<string, readonly ShellWord[] | undefined>();

/** A rule's command as words (`git commit -m "x"` → git, commit, -m, x), or undefined when it is not one simple command. */
function ruleWords(text: string): readonly ShellWord[] | undefined {
  if (ruleWordsCache.has(text)) return ruleWordsCache.get(text);
  const analysis = analyzeShell(text);
  const [first, ...others] = analysis.commands;
  const words =
    analysis.opaque.length === 0 &&
    others.length === 0 &&
    first?.words.every((word) => word.kind === "literal")
      ? first.words
      : undefined;
  ruleWordsCache.set(text, words);
  return words;
}

/**
 * Whether a Bash rule covers one simple command (R-S1, R-S3). Words are compared, not text, so
 * quoting cannot fake a match. For `allow`, every word must be literal and the program name is the
 * trusted one (`./npm` is not `npm`); for `deny`, the program's base name counts (`/bin/rm` is
 * `rm`) and a word only known at run time may be anything, so it matches.
 */
export function commandMatchesRule(
  specifier: CommandSpecifier,
  command: ShellCommand,
  purpose: "allow" | "deny",
): boolean {
  if (command.words.length === 0) return false;
  if (purpose === "allow" && command.assignments.some((name) => !HARMLESS_ENVIRONMENT.has(name)))
    return false;
  const name = purpose === "allow" ? programName(command.words[0]) : denyName(command.words[0]);
  if (name === undefined) return purpose === "deny";
  const words = [name, ...command.words.slice(1).map(wordValue)];
  switch (specifier.type) {
    case "command-exact":
    case "command-prefix": {
      const text = specifier.type === "command-exact" ? specifier.command : specifier.prefix;
      const wanted = ruleWords(text)?.map((word, index) =>
        index === 0 ? denyName(word) : literalValue(word),
      );
      if (wanted === undefined) return false;
      if (specifier.type === "command-exact" && wanted.length !== words.length) return false;
      if (wanted.length > words.length) return false;
      return wanted.every((value, index) => {
        const word = words[index];
        return word === value || (word === undefined && purpose === "deny");
      });
    }
    case "command-wildcard": {
      // RE2, not RegExp: `Bash(*a*a*a*a*a*a*b)` (a project may ship deny rules) over a long model
      // command would backtrack for ever (R-S12).
      const source = specifier.pattern.split("*").map(re2().RE2JS.quote).join(".*");
      const text = [name, ...command.words.slice(1).map(displayWord)].join(" ");
      return re2().RE2JS.compile(`^${source}$`, re2().RE2JS.DOTALL).test(text);
    }
    default: {
      const unreachable: never = specifier;
      throw new Error(`unknown command specifier ${JSON.stringify(unreachable)}`);
    }
  }
}

/** A literal word's value; undefined (matches anything for deny, nothing for allow) otherwise. */
function wordValue(word: ShellWord): string | undefined {
  return literalValue(word);
}
