import { type FlagSpec, flags, hasFlag, parseArguments } from "./command-flags.js";
import type { PathRead, ReadOnlyVerdict } from "./read-only-commands.js";
import { literalValue, type ShellWord } from "./shell-word.js";

/**
 * Options of `git diff`, `log`, `show` that only shape the output. Not here: `--output` (writes a
 * file), `--ext-diff` and `--textconv` (run programs), `--no-index` (compares files outside the
 * repository), `--show-signature` (runs gpg), `-O` orderfile reads.
 */
const DIFF_OPTIONS =
  "-p -u -s -z -R -a -b -w -W -U:value -M:optional -C:optional -B:optional -D -l:value -S:value -G:value " +
  "--patch --no-patch --unified:value --raw --patch-with-raw --stat:optional --numstat --shortstat " +
  "--dirstat:optional --summary --patch-with-stat --name-only --name-status --submodule:optional " +
  "--color:optional --no-color --color-moved:optional --color-words:optional --word-diff:optional " +
  "--word-diff-regex:value --no-renames --find-renames:optional --find-copies:optional " +
  "--find-copies-harder --irreversible-delete --diff-filter:value --diff-algorithm:value --minimal " +
  "--patience --histogram --anchored:value --abbrev:optional --full-index --binary --text " +
  "--ignore-space-at-eol --ignore-space-change --ignore-all-space --ignore-blank-lines " +
  "--ignore-cr-at-eol --ignore-matching-lines:value --inter-hunk-context:value --function-context " +
  "--exit-code --quiet --no-ext-diff --no-textconv --ignore-submodules:optional --src-prefix:value " +
  "--dst-prefix:value --no-prefix --default-prefix --line-prefix:value --relative:optional " +
  "--no-relative --cached --staged --merge-base --pickaxe-all --pickaxe-regex --check --compact-summary " +
  "--stat-width:value --stat-count:value --ita-invisible-in-index --indent-heuristic --no-indent-heuristic";

const LOG_OPTIONS =
  "-n:value -N -i -E -F -P -g --max-count:value --skip:value --since:value --after:value --until:value " +
  "--before:value --author:value --committer:value --grep:value --all-match --invert-grep " +
  "--regexp-ignore-case --extended-regexp --fixed-strings --perl-regexp --merges --no-merges " +
  "--min-parents:value --max-parents:value --first-parent --all --branches:optional --tags:optional " +
  "--remotes:optional --glob:value --exclude:value --reflog --walk-reflogs --oneline --pretty:optional " +
  "--format:value --abbrev-commit --no-abbrev-commit --decorate:optional --no-decorate --source " +
  "--graph --reverse --date:value --relative-date --topo-order --date-order --author-date-order " +
  "--left-right --cherry-pick --cherry-mark --cherry --boundary --ancestry-path --simplify-by-decoration " +
  "--full-history --dense --sparse --simplify-merges --follow --parents --children --no-walk:optional " +
  "--do-walk --encoding:value --expand-tabs:optional --no-expand-tabs --notes:optional --no-notes " +
  "--mailmap --no-mailmap --use-mailmap --log-size --name-status -L:value --full-diff -m -c --cc " +
  "--diff-merges:value --remerge-diff --no-diff-merges --clear-decorations";

const LISTING =
  "--color:optional --no-color --column:optional --no-column --sort:value --format:value -i --ignore-case";

/** Read-only subcommands with the options that keep them read-only (R-S2). */
const GIT_SUBCOMMANDS: Readonly<
  Record<
    string,
    {
      readonly flags: FlagSpec;
      readonly check?: (
        operands: readonly ShellWord[],
        given: (...names: string[]) => boolean,
      ) => string | undefined;
    }
  >
> = {
  status: {
    flags: flags(
      "-s -b -v -z -u:optional --short --branch --porcelain:optional --long --verbose --untracked-files:optional " +
        "--ignored:optional --ignore-submodules:optional --column:optional --no-column --ahead-behind " +
        "--no-ahead-behind --renames --no-renames --find-renames:optional --show-stash",
    ),
  },
  diff: { flags: flags(DIFF_OPTIONS) },
  log: { flags: flags(`${DIFF_OPTIONS} ${LOG_OPTIONS}`) },
  show: { flags: flags(`${DIFF_OPTIONS} ${LOG_OPTIONS}`) },
  shortlog: {
    flags: flags(
      "-n -s -e -c -w:optional --numbered --summary --email --committer --group:value --all --since:value --until:value --author:value --no-merges --format:value",
    ),
  },
  "rev-parse": {
    flags: flags(
      "-q --show-toplevel --abbrev-ref:optional --short:optional --verify --quiet --git-dir --absolute-git-dir " +
        "--git-common-dir --is-inside-work-tree --is-inside-git-dir --is-bare-repository --is-shallow-repository " +
        "--show-prefix --show-cdup --symbolic --symbolic-full-name --all --branches:optional --tags:optional " +
        "--remotes:optional --show-superproject-working-tree --sq --default:value --show-object-format:optional " +
        "--show-ref-format --local-env-vars",
    ),
  },
  "ls-files": {
    flags: flags(
      "-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others --ignored --stage --unmerged " +
        "--killed --directory --no-empty-directory --exclude:value -x:value --exclude-standard --full-name " +
        "--abbrev:optional --error-unmatch --recurse-submodules --format:value --eol --deduplicate --sparse " +
        "--exclude-per-directory:value",
    ),
  },
  "ls-tree": {
    flags: flags(
      "-d -r -t -l -z --name-only --name-status --object-only --full-name --full-tree --abbrev:optional --long --format:value",
    ),
  },
  blame: {
    flags: flags(
      "-b -l -t -p -c -s -e -w -n -f -L:value -M:optional -C:optional --root --show-stats --show-name " +
        "--show-number --show-email --porcelain --line-porcelain --incremental --abbrev:optional --date:value " +
        "--first-parent --color-lines --color-by-age --ignore-rev:value --no-textconv",
    ),
  },
  describe: {
    flags: flags(
      "--tags --all --long --always --exact-match --contains --first-parent --abbrev:optional --dirty:optional " +
        "--broken:optional --match:value --exclude:value --candidates:value",
    ),
  },
  // Not --textconv or --filters: they run the drivers the config names.
  "cat-file": { flags: flags("-t -s -p -e --batch-check:optional --allow-unknown-type") },
  // Not -O/--open-files-in-pager (runs a program), --no-index, --textconv.
  grep: {
    flags: flags(
      "-i -v -w -n -l -L -c -h -H -E -F -G -P -I -o -z -q -W -p -N -e:value -A:value -B:value -C:value " +
        "--cached --untracked --recurse-submodules --max-depth:value --and --or --not --break --heading " +
        "--color:optional --column --count --name-only --files-with-matches --files-without-match " +
        "--full-name --only-matching --null --threads:value --exclude-standard --no-exclude-standard " +
        "--ignore-case --word-regexp --invert-match --line-number --extended-regexp --fixed-strings " +
        "--basic-regexp --perl-regexp --all-match --function-context --show-function --no-textconv",
    ),
  },
  // Listing only: a name operand creates a branch (`git branch NAME`).
  branch: {
    flags: flags(
      `-a -r -l -v --list --all --remotes --verbose --show-current --contains:optional --no-contains:optional ` +
        `--merged:optional --no-merged:optional --points-at:value ${LISTING}`,
    ),
    check: (operands, given) =>
      operands.length === 0 || given("l", "list") ? undefined : "git branch NAME creates a branch",
  },
  tag: {
    flags: flags(
      `-l -n:optional --list --contains:optional --no-contains:optional --merged:optional --no-merged:optional ` +
        `--points-at:value ${LISTING}`,
    ),
    check: (operands, given) =>
      operands.length === 0 || given("l", "list") ? undefined : "git tag NAME creates a tag",
  },
  // `git remote`, `git remote -v`, `git remote get-url NAME` only: add/remove/set-url change the config.
  remote: {
    flags: flags("-v --verbose --push --all"),
    check: (operands) => {
      const [action] = operands.map(literalValue);
      return action === undefined || action === "get-url"
        ? undefined
        : `git remote ${action ?? ""} changes or contacts remotes`;
    },
  },
  stash: {
    flags: flags(`${DIFF_OPTIONS} ${LOG_OPTIONS}`),
    check: (operands) => {
      const action = literalValue(operands[0]);
      return action === "list" || action === "show" ? undefined : "git stash changes the working tree";
    },
  },
  worktree: {
    flags: flags("-v --porcelain -z --verbose"),
    check: (operands) =>
      literalValue(operands[0]) === "list" ? undefined : "git worktree changes worktrees",
  },
};

/** Options before the subcommand that cannot point git elsewhere or set config (`-c`, `-C`, `--git-dir` are out). */
const GIT_GLOBAL_OPTIONS = new Set([
  "--no-pager",
  "-P",
  "--no-optional-locks",
  "--literal-pathspecs",
  "--no-replace-objects",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
]);

/**
 * git is read-only only for the listed subcommands and options; the caller must also check that
 * the repository's own config names no program (`runsGit`): `core.fsmonitor`, `diff.external`,
 * textconv drivers run during `git status` / `git diff`.
 */
export function gitReadOnly(args: readonly ShellWord[]): ReadOnlyVerdict {
  let index = 0;
  while (index < args.length && GIT_GLOBAL_OPTIONS.has(literalValue(args[index]) ?? "")) index++;
  const subcommandWord = args[index];
  const subcommand = literalValue(subcommandWord);
  if (subcommand === "--version" && index === args.length - 1) return { readOnly: true, reads: [] };
  if (subcommand === undefined) {
    return {
      readOnly: false,
      reason:
        subcommandWord === undefined
          ? "git without a subcommand"
          : `git ${subcommandWord.text} is not in the read-only list`,
    };
  }
  const policy = GIT_SUBCOMMANDS[subcommand];
  if (policy === undefined)
    return { readOnly: false, reason: `git ${subcommand} is not in the read-only list` };
  const rest = args.slice(index + 1);
  const dynamic = rest.find((word) => word.kind !== "literal");
  if (dynamic !== undefined)
    return {
      readOnly: false,
      reason: `git ${subcommand} ${dynamic.text}: an argument only known at run time`,
    };
  const parsed = parseArguments(rest, policy.flags);
  if (!parsed.ok)
    return {
      readOnly: false,
      reason: `git ${subcommand} with ${parsed.reason} is not in the read-only list`,
    };
  const problem = policy.check?.(parsed.operands, (...names) => hasFlag(parsed.flags, ...names));
  if (problem !== undefined) return { readOnly: false, reason: problem };
  // `git grep PATTERN [PATH…]`: the pattern is not a path unless -e gave it.
  const operands =
    subcommand === "grep" && !hasFlag(parsed.flags, "e") ? parsed.operands.slice(1) : parsed.operands;
  return { readOnly: true, reads: gitPathReads(subcommand, operands), runsGit: true };
}

/**
 * The files a git command names, so path deny rules reach them: `git show HEAD:.env` reads `.env`
 * (relative to the repository root, approximated by the working directory), `git diff -- .env` and
 * `git blame .env` read `.env`. Revisions that are not paths do not exist as files and match no rule.
 */
function gitPathReads(subcommand: string, operands: readonly ShellWord[]): PathRead[] {
  if (
    !["diff", "log", "show", "blame", "cat-file", "grep", "ls-files", "ls-tree", "status"].includes(
      subcommand,
    )
  )
    return [];
  const reads: PathRead[] = [];
  for (const word of operands) {
    const value = literalValue(word) ?? "";
    const colon = value.indexOf(":");
    const path = colon === -1 ? value : value.slice(colon + 1);
    if (path.length > 0)
      reads.push({
        word: { kind: "literal", text: path, value: path.replace(/^\.\//, "") },
        recursive: false,
      });
  }
  if (subcommand === "grep")
    reads.push({ word: { kind: "literal", text: ".", value: "." }, recursive: "contents" });
  return reads;
}

/**
 * Files git writes because an option says so (`git diff --output=FILE`, `git log --output FILE`,
 * `git format-patch -o DIR` is not read-only anyway): under an allow rule such as
 * `Bash(git diff:*)` they are checked like `> FILE` (R-S1: every write to a file is a write).
 */
export function gitOutputFiles(args: readonly ShellWord[]): ShellWord[] {
  const files: ShellWord[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as ShellWord;
    const value = literalValue(word);
    if (value === "--") break;
    if (value === "--output") {
      const next = args[++index];
      if (next !== undefined) files.push(next);
    } else if (value?.startsWith("--output=")) {
      const path = value.slice("--output=".length);
      files.push({ kind: "literal", text: path, value: path });
    } else if (value === undefined && word.text.startsWith("--output")) {
      files.push({ kind: "dynamic", text: word.text });
    }
  }
  return files;
}

/**
 * Files a git command may read from anywhere: the operands of `git diff` (with `--no-index`, or
 * implied when a path is outside the repository, it is a plain diff of any two paths —
 * `git diff /dev/null ~/.ssh/id_rsa`; `--no-index` follows symlinks below directories) and an
 * `-O`/`--orderfile` file. Under an allow rule such as `Bash(git diff:*)` they are checked like a
 * read-only command's reads (R-S2: an allow rule approves git, not reads outside the
 * workspace). A revision (`HEAD~1`) names no file and passes.
 */
export function gitFilesRead(args: readonly ShellWord[]): PathRead[] {
  const values = args.map(literalValue);
  const reads: PathRead[] = [];
  const subcommand = values.findIndex((value, index) => {
    const previous = values[index - 1];
    return value !== undefined && !value.startsWith("-") && previous !== "-C" && previous !== "-c";
  });
  if (subcommand === -1) return reads;
  const noIndex = values.includes("--no-index");
  const diff = values[subcommand] === "diff";
  let options = true;
  for (let index = subcommand + 1; index < args.length; index++) {
    const word = args[index] as ShellWord;
    const value = values[index];
    if (options && value === "--") {
      options = false;
      continue;
    }
    if (options && (value === "-O" || value === "--orderfile")) {
      const file = args[++index];
      if (file !== undefined) reads.push({ word: file, recursive: false });
      continue;
    }
    const attached = options ? /^(-O|--orderfile=)(.+)$/s.exec(value ?? "") : null;
    if (attached !== null) {
      const path = attached[2] as string;
      reads.push({ word: { kind: "literal", text: path, value: path }, recursive: false });
      continue;
    }
    if (options && (value === undefined ? word.text.startsWith("-") : value.startsWith("-"))) continue;
    if (diff) reads.push({ word, recursive: noIndex ? "contents-through-links" : false });
  }
  return reads;
}
