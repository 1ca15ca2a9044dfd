/**
 * Commands whose every form only reads. A Bash call counts as read-only (so plan mode allows it
 * and it may run in parallel, R-P1/R-T2) only when it is a plain pipeline/list of these, with no
 * redirection, substitution, background job or variable assignment: anything clever is "not
 * read-only" and goes through the normal permission path.
 */
const READ_ONLY_COMMANDS = new Set([
  "cat",
  "head",
  "tail",
  "less",
  "wc",
  "ls",
  "pwd",
  "echo",
  "printf",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "file",
  "stat",
  "du",
  "df",
  "tree",
  "which",
  "whoami",
  "date",
  "uname",
  "env",
  "printenv",
  "diff",
  "cut",
  "sort",
  "uniq",
  "tr",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "true",
  "false",
  "test",
  "nl",
  "od",
  "xxd",
  "hexdump",
  "cmp",
  "column",
  "seq",
  "jq",
  "sha256sum",
  "md5sum",
  "id",
  "hostname",
]);
const READ_ONLY_GIT = new Set([
  "status",
  "log",
  "diff",
  "show",
  "branch",
  "rev-parse",
  "ls-files",
  "blame",
  "describe",
  "remote",
  "shortlog",
  "grep",
  "cat-file",
  "ls-tree",
]);
/** find's actions that write, delete or run other programs. */
const FIND_WRITING_ACTIONS = /(^|\s)-(delete|exec|execdir|ok|okdir|fprint|fprint0|fprintf|fls)(\s|$)/;
/** Shell syntax that can write or run arbitrary code: redirection, substitution, background, subshells. */
const UNSAFE_SYNTAX = /[<>`$(){}&\\\n]|\|&/;

export function isReadOnlyCommand(command: string): boolean {
  const withoutLists = command.replace(/&&|\|\|/g, ";");
  if (withoutLists.trim().length === 0 || UNSAFE_SYNTAX.test(withoutLists.replace(/'[^']*'/g, "''")))
    return false;
  return withoutLists.split(/[;|]/).every((segment) => isReadOnlySimpleCommand(segment.trim()));
}

function isReadOnlySimpleCommand(segment: string): boolean {
  const words = segment.split(/\s+/).filter((word) => word.length > 0);
  const [program, subcommand] = words;
  if (program === undefined || program.includes("=")) return false;
  if (program === "git")
    return subcommand !== undefined && READ_ONLY_GIT.has(subcommand) && !segment.includes("--output");
  if (program === "find") return !FIND_WRITING_ACTIONS.test(segment);
  if (program === "sort") return !/(^|\s)-o/.test(segment);
  return READ_ONLY_COMMANDS.has(program);
}
