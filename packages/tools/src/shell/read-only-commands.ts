import { type FlagSpec, flags, hasFlag, type ParsedArguments, parseArguments } from "./command-flags.js";
import { gitReadOnly } from "./git-read-only.js";
import { literalValue, type ShellWord } from "./shell-word.js";

/**
 * A file or directory a read-only command reads. `recursive`: what it reads below a directory —
 * names and metadata only (`ls -R`, `find`, `du`, `tree`), file contents (`grep -r`, `rg`,
 * `git grep`), or contents through symlinks too (`diff -r` follows them).
 */
export interface PathRead {
  readonly word: ShellWord;
  readonly recursive: false | RecursiveRead;
}

export type RecursiveRead = "names" | "contents" | "contents-through-links";

export type ReadOnlyVerdict =
  | {
      readonly readOnly: true;
      readonly reads: readonly PathRead[];
      /** `cd DIR`: later relative paths resolve from DIR. */
      readonly changesDirectory?: ShellWord | "home";
      /** git runs here: the repository's own config must not name a program (see git-config-check). */
      readonly runsGit?: true;
    }
  | { readonly readOnly: false; readonly reason: string };

/**
 * How a command's operands are read: `paths` (every operand is a file it reads), `text` (none is),
 * `pattern-then-paths` (grep PATTERN FILE…, unless -e/-f gave the pattern), or a custom check.
 */
type Operands =
  | { readonly kind: "paths"; readonly max?: number }
  | { readonly kind: "text"; readonly max?: number }
  | { readonly kind: "pattern-then-paths"; readonly patternFlags: readonly string[] }
  | { readonly kind: "none" };

interface ReadOnlyPolicy {
  readonly flags: FlagSpec;
  readonly operands: Operands;
  /** Options that make directory operands recursive; `always` for rg, du, find, tree. */
  readonly recursive?: readonly string[] | "always";
  /** What a recursive read reads below a directory (default `contents`). */
  readonly below?: RecursiveRead;
  /** With no path operand it reads the working directory (`ls`, `grep -r`, `rg`). */
  readonly defaultsToCwd?: "always" | "when-recursive";
  /** Arguments only known at run time cannot turn into a harmful option (`echo $X`). */
  readonly anyArgumentIsSafe?: true;
  /** No option parsing at all (`test`, `[`): every argument is text. */
  readonly noOptions?: true;
  /** A last check on the parsed arguments; returns why the command is not read-only. */
  readonly check?: (parsed: Extract<ParsedArguments, { ok: true }>) => string | undefined;
}

const paths: Operands = { kind: "paths" };
const text: Operands = { kind: "text" };
const none: Operands = { kind: "none" };

const GREP_FLAGS = flags(
  "-E -F -G -P -i -y -v -w -x -c -L -l -o -q -s -b -H -h -n -T -Z -z -a -I -r -U -N " +
    "-e:value -f:path -m:value -A:value -B:value -C:value -d:value -D:value " +
    "--extended-regexp --fixed-strings --basic-regexp --perl-regexp --ignore-case --no-ignore-case " +
    "--invert-match --word-regexp --line-regexp --count --files-without-match --files-with-matches " +
    "--only-matching --quiet --silent --no-messages --byte-offset --with-filename --no-filename " +
    "--line-number --initial-tab --null --null-data --text --recursive --binary --line-buffered " +
    "--regexp:value --file:path --max-count:value --after-context:value --before-context:value " +
    "--context:value --include:value --exclude:value --exclude-dir:value --label:value " +
    "--binary-files:value --devices:value --directories:value --color:optional --colour:optional",
);

const RG_FLAGS = flags(
  "-i -s -S -v -w -x -F -c -l -n -N -H -I -o -u -a -U -P -p -q -0 -b " +
    "-e:value -g:value -t:value -T:value -A:value -B:value -C:value -m:value -M:value -j:value -r:value " +
    "--ignore-case --case-sensitive --smart-case --invert-match --word-regexp --line-regexp " +
    "--fixed-strings --count --count-matches --files-with-matches --files-without-match --line-number " +
    "--no-line-number --with-filename --no-filename --no-ignore --no-ignore-vcs --no-ignore-parent " +
    "--no-ignore-dot --no-ignore-global --hidden --no-hidden --unrestricted --text --binary " +
    "--multiline --multiline-dotall --pcre2 --pretty --quiet --null --byte-offset --only-matching " +
    "--json --vimgrep --heading --no-heading --trim --stats --files --type-list --column --passthru " +
    "--no-messages --no-config --crlf --no-unicode --no-require-git --one-file-system " +
    "--regexp:value --glob:value --iglob:value --type:value --type-not:value --type-add:value " +
    "--after-context:value --before-context:value --context:value --max-count:value " +
    "--max-columns:value --max-depth:value --max-filesize:value --threads:value --replace:value " +
    "--sort:value --sortr:value --color:value --colors:value --context-separator:value " +
    "--field-match-separator:value --field-context-separator:value --engine:value --encoding:value",
);

const GREP_POLICY: ReadOnlyPolicy = {
  flags: GREP_FLAGS,
  operands: { kind: "pattern-then-paths", patternFlags: ["e", "f", "regexp", "file"] },
  recursive: ["r", "recursive"],
  defaultsToCwd: "when-recursive",
  check: (parsed) => grepDevices(parsed),
};

const SUM_FLAGS = flags(
  "-b -t -z -c -w --binary --text --tag --zero --check --quiet --status --strict --warn --ignore-missing",
);

const HEAD_FLAGS = flags(
  "-c:value -n:value -q -v -z -N --bytes:value --lines:value --quiet --silent --verbose --zero-terminated",
);

/**
 * Commands that only read, with the options that keep them so (R-S2). An option not listed makes
 * the call not read-only, so each row is a reviewable allowlist, as Claude Code's read-only
 * validators are. Left out on purpose: `env`/`printenv` (print the environment), `xargs`, `awk`,
 * `sed`, `less`/`more` (`!cmd`, LESSOPEN), interpreters, and anything not listed.
 */
const READ_ONLY_COMMANDS: Readonly<Record<string, ReadOnlyPolicy>> = {
  cat: {
    flags: flags(
      "-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --show-ends --number " +
        "--squeeze-blank --show-tabs --show-nonprinting",
    ),
    operands: paths,
  },
  head: { flags: HEAD_FLAGS, operands: paths },
  tail: { flags: HEAD_FLAGS, operands: paths },
  wc: { flags: flags("-c -m -l -L -w --bytes --chars --lines --max-line-length --words"), operands: paths },
  nl: {
    flags: flags("-b:value -d:value -f:value -h:value -i:value -n:value -s:value -v:value -w:value -p"),
    operands: paths,
  },
  od: {
    flags: flags(
      "-A:value -j:value -N:value -t:value -w:optional -v -a -b -c -d -f -i -l -o -s -x " +
        "--address-radix:value --skip-bytes:value --read-bytes:value --format:value --output-duplicates " +
        "--width:optional --endian:value",
    ),
    operands: paths,
  },
  hexdump: { flags: flags("-b -c -C -d -o -x -v -e:value -n:value -s:value"), operands: paths },
  cmp: {
    flags: flags(
      "-b -l -s -i:value -n:value --print-bytes --verbose --quiet --silent --ignore-initial:value --bytes:value",
    ),
    operands: { kind: "paths", max: 2 },
  },
  cut: {
    flags: flags(
      "-b:value -c:value -d:value -f:value -s -z -n --bytes:value --characters:value --delimiter:value " +
        "--fields:value --complement --only-delimited --output-delimiter:value --zero-terminated",
    ),
    operands: paths,
  },
  // Not -o/--output (writes), -T (temporary files), --compress-program (runs a program), --files0-from.
  sort: {
    flags: flags(
      "-b -d -f -g -i -M -h -n -R -r -V -c -C -m -s -u -z -k:value -t:value -S:value " +
        "--ignore-leading-blanks --dictionary-order --ignore-case --general-numeric-sort " +
        "--ignore-nonprinting --month-sort --human-numeric-sort --numeric-sort --random-sort --reverse " +
        "--version-sort --check:optional --merge --stable --unique --zero-terminated --key:value " +
        "--field-separator:value --buffer-size:value --parallel:value --sort:value",
    ),
    operands: paths,
  },
  // A second operand is the file uniq writes.
  uniq: {
    flags: flags(
      "-c -d -D -i -u -z -f:value -s:value -w:value --count --repeated --all-repeated:optional " +
        "--skip-fields:value --ignore-case --skip-chars:value --unique --check-chars:value " +
        "--zero-terminated --group:optional",
    ),
    operands: { kind: "paths", max: 1 },
  },
  column: {
    flags: flags(
      "-t -x -n -e -J -d -L -s:value -c:value -o:value -N:value -R:value -T:value -W:value -l:value -H:value -r:value",
    ),
    operands: paths,
  },
  sha256sum: { flags: SUM_FLAGS, operands: paths },
  sha1sum: { flags: SUM_FLAGS, operands: paths },
  sha512sum: { flags: SUM_FLAGS, operands: paths },
  md5sum: { flags: SUM_FLAGS, operands: paths },
  b2sum: { flags: SUM_FLAGS, operands: paths },
  cksum: { flags: flags("-a:value --algorithm:value --untagged --tag --base64 --raw"), operands: paths },
  diff: {
    flags: flags(
      "-q -s -c -u -e -n -y -t -T -i -E -Z -b -w -B -a -r -N -p -d -C:value -U:value -W:value -I:value " +
        "-x:value -X:path -S:value -F:value --brief --report-identical-files --context:optional " +
        "--unified:optional --ed --normal --side-by-side --width:value --expand-tabs --initial-tab " +
        "--ignore-case --ignore-tab-expansion --ignore-trailing-space --ignore-space-change " +
        "--ignore-all-space --ignore-blank-lines --ignore-matching-lines:value --text --recursive " +
        "--new-file --unidirectional-new-file --exclude:value --exclude-from:path --strip-trailing-cr " +
        "--color:optional --label:value --suppress-common-lines --minimal --speed-large-files " +
        "--no-dereference --show-c-function --show-function-line:value",
    ),
    operands: paths,
    recursive: ["r", "recursive"],
    // GNU diff follows symlinks below the directories it compares (unless --no-dereference).
    below: "contents-through-links",
  },
  grep: GREP_POLICY,
  egrep: GREP_POLICY,
  fgrep: GREP_POLICY,
  // Not --pre (runs a program on each file), -z (decompressors), -L (follows symlinks out), -f, --ignore-file.
  rg: {
    flags: RG_FLAGS,
    operands: { kind: "pattern-then-paths", patternFlags: ["e", "regexp", "files", "type-list"] },
    recursive: "always",
    defaultsToCwd: "always",
  },
  ls: {
    flags: flags(
      "-a -A -b -B -c -C -d -f -F -g -G -h -H -i -k -l -L -m -n -N -o -p -q -Q -r -R -s -S -t -u -U -v " +
        "-x -X -Z -1 --all --almost-all --escape --ignore-backups --directory --classify --no-group " +
        "--human-readable --si --dereference-command-line --inode --literal --numeric-uid-gid " +
        "--hide-control-chars --quote-name --reverse --recursive --size --context --color:optional " +
        "--group-directories-first --full-time --time-style:value --sort:value --time:value " +
        "--format:value --indicator-style:value --width:value --ignore:value --hide:value " +
        "--block-size:value --quoting-style:value --file-type --author",
    ),
    operands: paths,
    recursive: ["R", "recursive"],
    below: "names",
    defaultsToCwd: "always",
  },
  // Not -o (writes the listing to a file) or -R (writes 00Tree.html files), -l (follows symlinks).
  tree: {
    flags: flags(
      "-a -d -f -i -x -s -h -p -u -g -D -F -q -N -v -t -c -r -U -C -n -J -X --prune --noreport " +
        "--dirsfirst --du --si --inodes --device --charset:value -P:value -I:value -L:value " +
        "--filelimit:value --sort:value --timefmt:value",
    ),
    operands: paths,
    recursive: "always",
    below: "names",
    defaultsToCwd: "always",
  },
  du: {
    flags: flags(
      "-a -b -c -h -k -m -s -x -0 -D -H -d:value --all --apparent-size --bytes --total --human-readable " +
        "--si --summarize --one-file-system --null --inodes --time --max-depth:value --exclude:value " +
        "--block-size:value --threshold:value",
    ),
    operands: paths,
    recursive: "always",
    below: "names",
    defaultsToCwd: "always",
  },
  stat: {
    flags: flags("-L -f -t -c:value --format:value --printf:value --terse --dereference --file-system"),
    operands: paths,
  },
  // Not -C (compiles a magic file), -z (decompressors), -m (magic from a file).
  file: {
    flags: flags(
      "-b -i -L -h -k -N -0 -r -s -E --brief --mime --mime-type --mime-encoding --dereference --no-dereference --keep-going --raw --special-files",
    ),
    operands: paths,
  },
  df: {
    flags: flags(
      "-a -h -H -i -k -l -P -T -t:value -x:value --all --human-readable --si --inodes --local " +
        "--portability --print-type --type:value --exclude-type:value --total --block-size:value",
    ),
    operands: paths,
  },
  cd: { flags: flags("-L -P"), operands: { kind: "paths", max: 1 } },
  pwd: { flags: flags("-L -P"), operands: none },
  echo: { flags: flags("-n -e -E"), operands: text, anyArgumentIsSafe: true },
  // Not -v (assigns a shell variable).
  printf: { flags: flags(""), operands: text },
  true: { flags: flags(""), operands: text, noOptions: true, anyArgumentIsSafe: true },
  // Waits and exits: no effect but time (the call's timeout bounds it). Claude Code's check accepts it too.
  sleep: { flags: flags(""), operands: text },
  false: { flags: flags(""), operands: text, noOptions: true, anyArgumentIsSafe: true },
  test: { flags: flags(""), operands: text, noOptions: true, anyArgumentIsSafe: true },
  "[": { flags: flags(""), operands: text, noOptions: true, anyArgumentIsSafe: true },
  tr: {
    flags: flags("-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1"),
    operands: text,
  },
  seq: {
    flags: flags("-w -N -f:value -s:value --format:value --separator:value --equal-width"),
    operands: text,
  },
  basename: { flags: flags("-a -z -s:value --multiple --suffix:value --zero"), operands: text },
  dirname: { flags: flags("-z --zero"), operands: text },
  realpath: {
    flags: flags(
      "-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing --logical --physical --quiet " +
        "--strip --no-symlinks --zero --relative-to:value --relative-base:value",
    ),
    operands: text,
  },
  readlink: {
    flags: flags(
      "-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing --canonicalize-missing --no-newline --quiet --silent --verbose --zero",
    ),
    operands: text,
  },
  which: { flags: flags("-a -s"), operands: text },
  type: { flags: flags("-a -f -P -p -t"), operands: text },
  command: {
    flags: flags("-v -V -p"),
    operands: text,
    check: (parsed) => (hasFlag(parsed.flags, "v", "V") ? undefined : "command runs a program"),
  },
  whoami: { flags: flags(""), operands: none },
  id: {
    flags: flags("-u -g -G -n -r -z --user --group --groups --name --real --zero"),
    operands: { kind: "text", max: 1 },
  },
  uname: {
    flags: flags(
      "-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release --kernel-version " +
        "--machine --processor --hardware-platform --operating-system",
    ),
    operands: none,
  },
  // Any operand sets the host name.
  hostname: {
    flags: flags(
      "-s -f -d -i -I -A -a --short --fqdn --long --domain --ip-address --all-ip-addresses --all-fqdns --alias",
    ),
    operands: none,
  },
  // Not -s/--set, and an operand must be a +FORMAT (`date MMDDhhmm` sets the clock).
  date: {
    flags: flags(
      "-u -R -I:optional -d:value -r:path --date:value --reference:path --utc --universal --rfc-email --iso-8601:optional --rfc-3339:value",
    ),
    operands: { kind: "text", max: 1 },
    check: (parsed) =>
      parsed.operands.every((word) => literalValue(word)?.startsWith("+") === true)
        ? undefined
        : "date with an operand that is not +FORMAT sets the clock",
  },
  // `exec` alone only applies its redirections (checked as writes).
  exec: { flags: flags(""), operands: none },
  find: {
    flags: flags(""),
    operands: text,
    noOptions: true,
  },
  xxd: { flags: flags(""), operands: text, noOptions: true },
  jq: { flags: flags(""), operands: text, noOptions: true },
  git: { flags: flags(""), operands: text, noOptions: true },
};

/** `grep -D read` opens devices and FIFOs named in the tree (a FIFO blocks forever). */
function grepDevices(parsed: Extract<ParsedArguments, { ok: true }>): string | undefined {
  const devices = parsed.flags.find((flag) => flag.name === "D" || flag.name === "devices");
  return devices === undefined || literalValue(devices.value) === "skip"
    ? undefined
    : "grep -D read opens devices";
}

/** Whether `words` (a simple command with a literal program name) only reads, and what it reads. */
export function readOnlyVerdict(name: string, args: readonly ShellWord[]): ReadOnlyVerdict {
  const policy = READ_ONLY_COMMANDS[name];
  if (policy === undefined) return { readOnly: false, reason: `${name} is not in the read-only list` };
  if (name === "find") return findVerdict(args);
  if (name === "xxd") return xxdVerdict(args);
  if (name === "jq") return jqVerdict(args);
  if (name === "git") return gitReadOnly(args);
  if (!policy.anyArgumentIsSafe && args.some((word) => word.kind !== "literal")) {
    const word = args.find((arg) => arg.kind !== "literal") as ShellWord;
    return { readOnly: false, reason: `${name} ${word.text}: an argument only known at run time` };
  }
  if (policy.noOptions) return { readOnly: true, reads: [] };
  const parsed = parseArguments(args, policy.flags);
  if (!parsed.ok)
    return { readOnly: false, reason: `${name} with ${parsed.reason} is not in the read-only list` };
  const problem = policy.check?.(parsed);
  if (problem !== undefined) return { readOnly: false, reason: problem };
  const below =
    policy.below === "contents-through-links" && hasFlag(parsed.flags, "no-dereference")
      ? "contents"
      : (policy.below ?? "contents");
  const recurses =
    policy.recursive === "always" ||
    (policy.recursive !== undefined && hasFlag(parsed.flags, ...policy.recursive)) ||
    parsed.flags.some(
      (flag) => (flag.name === "d" || flag.name === "directories") && literalValue(flag.value) === "recurse",
    );
  const recursive: PathRead["recursive"] = recurses ? below : false;
  const flagReads: PathRead[] = parsed.flags
    .filter((flag) => flag.argument === "path" && flag.value !== undefined)
    .map((flag) => ({ word: flag.value as ShellWord, recursive: false }));
  const operands = operandReads(policy, parsed);
  if (typeof operands === "string") return { readOnly: false, reason: `${name}: ${operands}` };
  let reads: PathRead[] = operands.map((word) => ({ word, recursive }));
  const defaults = policy.defaultsToCwd;
  if (reads.length === 0 && (defaults === "always" || (defaults === "when-recursive" && recurses))) {
    reads = [{ word: { kind: "literal", text: ".", value: "." }, recursive }];
  }
  const verdict: ReadOnlyVerdict = { readOnly: true, reads: [...flagReads, ...reads] };
  if (name === "cd") return { ...verdict, reads: [], changesDirectory: operands[0] ?? "home" };
  return verdict;
}

function operandReads(
  policy: ReadOnlyPolicy,
  parsed: Extract<ParsedArguments, { ok: true }>,
): ShellWord[] | string {
  const operands = policy.operands;
  switch (operands.kind) {
    case "none":
      return parsed.operands.length === 0 ? [] : "takes no operands here";
    case "text":
      return operands.max !== undefined && parsed.operands.length > operands.max
        ? `more than ${operands.max} operand`
        : [];
    case "paths":
      return operands.max !== undefined && parsed.operands.length > operands.max
        ? `more than ${operands.max} file operand${operands.max === 1 ? "" : "s"} (the next one is written)`
        : [...parsed.operands];
    case "pattern-then-paths":
      return hasFlag(parsed.flags, ...operands.patternFlags)
        ? [...parsed.operands]
        : parsed.operands.slice(1);
    default: {
      const unreachable: never = operands;
      throw new Error(`unknown operands ${JSON.stringify(unreachable)}`);
    }
  }
}

/** find's tests and actions that neither write, delete nor run programs. */
const FIND_PREDICATES_WITH_VALUE = new Set(
  "-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -type -xtype -size -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -perm -user -group -uid -gid -links -inum -samefile -lname -ilname -maxdepth -mindepth -printf -fstype -used -newermt".split(
    " ",
  ),
);
const FIND_PREDICATES = new Set(
  "-print -print0 -ls -prune -not ! -a -o -and -or ( ) , -depth -xdev -mount -empty -readable -writable -executable -true -false -quit -daystart -nouser -nogroup -noleaf -nowarn -warn".split(
    " ",
  ),
);

/** `find PATH… EXPRESSION`: start points, then only listed tests and actions (no -exec/-delete/-fprint). */
function findVerdict(args: readonly ShellWord[]): ReadOnlyVerdict {
  const starts: ShellWord[] = [];
  let index = 0;
  while (index < args.length && literalValue(args[index]) === "-P") index++;
  for (; index < args.length; index++) {
    const word = args[index] as ShellWord;
    const value = literalValue(word);
    if (value === undefined)
      return { readOnly: false, reason: `find ${word.text}: an argument only known at run time` };
    if (value.startsWith("-") || value === "(" || value === "!") break;
    starts.push(word);
  }
  for (; index < args.length; index++) {
    const word = args[index] as ShellWord;
    const value = literalValue(word);
    if (value === undefined)
      return { readOnly: false, reason: `find ${word.text}: an argument only known at run time` };
    if (FIND_PREDICATES.has(value)) continue;
    if (FIND_PREDICATES_WITH_VALUE.has(value)) {
      index++;
      if (args[index] === undefined) return { readOnly: false, reason: `find ${value} without its value` };
      if (args[index]?.kind === "dynamic")
        return { readOnly: false, reason: `find ${value}: a value only known at run time` };
      continue;
    }
    return {
      readOnly: false,
      reason: `find ${value} is not in the read-only list (it can write, delete or run programs)`,
    };
  }
  const reads = (starts.length === 0 ? [{ kind: "literal", text: ".", value: "." } as const] : starts).map(
    (word) => ({
      word,
      recursive: "names" as const,
    }),
  );
  return { readOnly: true, reads };
}

/** xxd's options are whole words (`-ps`, `-cols 8`); -r/-revert writes binary, a second operand is its output file. */
const XXD_OPTIONS = new Set(
  "-a -autoskip -b -bits -C -capitalize -e -E -EBCDIC -i -include -p -ps -postscript -plain -u -uppercase -d".split(
    " ",
  ),
);
const XXD_VALUE_OPTIONS = new Set(
  "-c -cols -g -groupsize -l -len -o -offset -s -seek -n -name -R".split(" "),
);

function xxdVerdict(args: readonly ShellWord[]): ReadOnlyVerdict {
  const operands: ShellWord[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as ShellWord;
    const value = literalValue(word);
    if (value === undefined)
      return { readOnly: false, reason: `xxd ${word.text}: an argument only known at run time` };
    if (XXD_OPTIONS.has(value)) continue;
    if (XXD_VALUE_OPTIONS.has(value)) {
      index++;
      continue;
    }
    if (value.startsWith("-") && value !== "-")
      return { readOnly: false, reason: `xxd ${value} is not in the read-only list` };
    operands.push(word);
  }
  if (operands.length > 1) return { readOnly: false, reason: "xxd with a second operand writes that file" };
  return { readOnly: true, reads: operands.map((word) => ({ word, recursive: false })) };
}

const JQ_OPTIONS = new Set(
  "-n -r -j -a -c -C -M -S -s -e -R --null-input --raw-output --join-output --ascii-output --compact-output --color-output --monochrome-output --sort-keys --slurp --exit-status --raw-input --tab --seq --stream --raw-output0".split(
    " ",
  ),
);

/** `jq FILTER FILE…`: options listed here only; `--arg NAME VALUE` takes two words; `--rawfile NAME FILE` reads FILE. */
function jqVerdict(args: readonly ShellWord[]): ReadOnlyVerdict {
  const reads: PathRead[] = [];
  let filterSeen = false;
  let positionalAreValues = false;
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as ShellWord;
    const value = literalValue(word);
    if (value === undefined)
      return { readOnly: false, reason: `jq ${word.text}: an argument only known at run time` };
    if (JQ_OPTIONS.has(value)) continue;
    if (value === "--indent") {
      index++;
      continue;
    }
    if (value === "--arg" || value === "--argjson") {
      index += 2;
      continue;
    }
    if (value === "--rawfile" || value === "--slurpfile") {
      const file = args[index + 2];
      if (file !== undefined) reads.push({ word: file, recursive: false });
      index += 2;
      continue;
    }
    if (value === "--args" || value === "--jsonargs") {
      positionalAreValues = true;
      continue;
    }
    if (value.startsWith("-") && value !== "-")
      return { readOnly: false, reason: `jq ${value} is not in the read-only list` };
    if (!filterSeen) {
      // Modules are files jq finds on its search path (`~/.jq`, `$ORIGIN/../lib/jq`), outside the workspace.
      if (/\b(import|include|modulemeta)\b/.test(value))
        return {
          readOnly: false,
          reason: "jq with import, include or modulemeta reads modules from outside the workspace",
        };
      filterSeen = true;
      continue;
    }
    if (!positionalAreValues) reads.push({ word, recursive: false });
  }
  return { readOnly: true, reads };
}
