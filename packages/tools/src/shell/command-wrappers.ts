import { type FlagSpec, flags, hasFlag, type ParsedFlag, parseArguments } from "./command-flags.js";
import { programName } from "./program-name.js";
import { literalValue, type ShellWord } from "./shell-word.js";

/** What a command runs besides itself (R-S1: wrappers are unwrapped, literal scripts parsed). */
export type Unwrapped =
  /** Runs nothing else. */
  | { readonly type: "plain" }
  /** Runs `command` (with these extra environment names); the wrapper itself is judged by it. */
  | {
      readonly type: "wrapper";
      readonly command: readonly ShellWord[];
      readonly assignments: readonly string[];
      readonly extraArguments: boolean;
    }
  /** Runs these literal shell scripts (`bash -c '…'`, `eval '…'`, `trap '…' EXIT`). */
  | { readonly type: "script"; readonly scripts: readonly string[] }
  /** Judged itself, and also runs these commands (`find -exec cmd {} ;`). */
  | { readonly type: "also"; readonly commands: readonly (readonly ShellWord[])[] }
  /** Runs something the parser cannot see (`bash -c "$x"`, `env -S …`). */
  | { readonly type: "opaque"; readonly reason: string };

interface WrapperSpec {
  readonly flags: FlagSpec;
  /** Operands before the command: `timeout 5 cmd`, `flock FILE cmd`. */
  readonly operandsBefore?: number;
  /** `env NAME=VALUE cmd`. */
  readonly assignments?: boolean;
  /** `xargs cmd`: arguments from stdin are appended. */
  readonly extraArguments?: boolean;
  /** An option whose value is a shell script (`flock -c '…'`). */
  readonly scriptFlag?: string;
}

/**
 * Commands that run another command given as their arguments. Options not listed here make the
 * wrapper opaque (`env -S 'rm x'`, `env -C dir`, `time -o FILE`): the command it runs is not seen.
 */
const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  env: {
    flags: flags("-i -0 -v -u:value --ignore-environment --null --debug --unset:value"),
    assignments: true,
  },
  nice: { flags: flags("-n:value --adjustment:value -N") },
  nohup: { flags: flags("") },
  timeout: {
    flags: flags(
      "-s:value -k:value -v --signal:value --kill-after:value --preserve-status --foreground --verbose",
    ),
    operandsBefore: 1,
  },
  stdbuf: { flags: flags("-i:value -o:value -e:value --input:value --output:value --error:value") },
  setsid: { flags: flags("-c -f -w --ctty --fork --wait") },
  ionice: { flags: flags("-c:value -n:value -t --class:value --classdata:value --ignore") },
  exec: { flags: flags("-a:value -c -l") },
  builtin: { flags: flags("") },
  command: { flags: flags("-p") },
  time: { flags: flags("-p -v -q -f:value --portability --verbose --quiet --format:value") },
  xargs: {
    flags: flags(
      "-0 -a:path -d:value -E:value -I:value -L:value -n:value -P:value -s:value -p -r -t -x -o " +
        "--null --arg-file:path --delimiter:value --eof:value --replace:value --max-lines:value " +
        "--max-args:value --max-procs:value --max-chars:value --interactive --no-run-if-empty --verbose " +
        "--exit --open-tty --process-slot-var:value",
    ),
    extraArguments: true,
  },
  sudo: {
    flags: flags(
      "-u:value -g:value -E -H -n -S -k -b -P --user:value --group:value --preserve-env --set-home " +
        "--non-interactive --stdin --background --preserve-groups",
    ),
  },
  doas: { flags: flags("-u:value -n") },
  busybox: { flags: flags("") },
  toybox: { flags: flags("") },
  unbuffer: { flags: flags("") },
  flock: {
    flags: flags(
      "-s -x -e -n -u -o -F -w:value -E:value -c:value --shared --exclusive --nonblock --unlock --close " +
        "--no-fork --timeout:value --conflict-exit-code:value --command:value",
    ),
    operandsBefore: 1,
    scriptFlag: "c",
  },
};

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"]);
/** Shell options that take a value: `-o pipefail`, `-O extglob`, `--rcfile FILE`. */
const SHELL_VALUE_OPTIONS = new Set(["-o", "+o", "-O", "+O", "--rcfile", "--init-file"]);
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);
const WATCH_FLAGS = flags(
  "-n:value -d -t -b -e -g -c -p -x -w --interval:value --differences --no-title --beep --errexit " +
    "--chgexit --color --precise --exec --no-wrap",
);

/** What else is known about how the command runs. */
export interface UnwrapContext {
  /** Its standard input when a literal heredoc or here-string gives it (`sh <<'EOF' … EOF`). */
  readonly stdinScript?: string | undefined;
  /** `xargs` or `find -exec` appends arguments only known at run time. */
  readonly extraArguments?: boolean;
}

/** What the command `words` (a literal program name first) runs besides itself. */
export function unwrapCommand(words: readonly ShellWord[], context: UnwrapContext = {}): Unwrapped {
  const name = programName(words[0]);
  if (name === undefined) return { type: "plain" };
  const args = words.slice(1);
  if (SHELLS.has(name)) return unwrapShell(name, args, context);
  switch (name) {
    case "eval":
      // `eval -- 'rm x'`: bash's eval takes (and drops) `--`.
      return literalScript("eval", withoutEndOfOptions(args), args);
    case "trap":
      return unwrapTrap(args);
    case "watch":
      return unwrapWatch(args);
    case "find":
      return unwrapFind(args);
    case "command":
      // `command -v x` only looks the name up.
      if (args.some((word) => literalValue(word) === "-v" || literalValue(word) === "-V"))
        return { type: "plain" };
      break;
    default:
      break;
  }
  const spec = WRAPPERS[name];
  return spec === undefined ? { type: "plain" } : unwrapWith(name, spec, args);
}

function unwrapWith(name: string, spec: WrapperSpec, args: readonly ShellWord[]): Unwrapped {
  const parsed = parseArguments(args, spec.flags, { stopAtOperand: true });
  if (!parsed.ok)
    return { type: "opaque", reason: `${name} with ${parsed.reason} runs a command that cannot be checked` };
  if (spec.scriptFlag !== undefined && hasFlag(parsed.flags, spec.scriptFlag, "command")) {
    const script = parsed.flags.find(
      (flag) => flag.name === spec.scriptFlag || flag.name === "command",
    )?.value;
    return literalScript(name, script === undefined ? [] : [script], args);
  }
  let operands: readonly ShellWord[] = parsed.operands.slice(spec.operandsBefore ?? 0);
  // `flock FILE -c '…'`: the script option may also follow the lock file.
  const scriptOption = literalValue(operands[0]);
  if (
    spec.scriptFlag !== undefined &&
    (scriptOption === `-${spec.scriptFlag}` || scriptOption === "--command")
  )
    return literalScript(name, operands.slice(1, 2), args);
  if (name === "xargs") operands = withReplacedArguments(parsed.flags, operands);
  const assignments: string[] = [];
  if (spec.assignments === true) {
    while (operands.length > 0) {
      const value = literalValue(operands[0]);
      const match = value === undefined ? null : /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(value);
      if (match === null) {
        if (operands[0]?.kind !== "literal" && operands[0]?.text.includes("=")) {
          return {
            type: "opaque",
            reason: `${name} ${operands[0]?.text} sets a variable only known at run time`,
          };
        }
        break;
      }
      assignments.push(match[1] as string);
      operands = operands.slice(1);
    }
  }
  return { type: "wrapper", command: operands, assignments, extraArguments: spec.extraArguments === true };
}

/**
 * `bash -c 'script'` runs the literal script; `bash file` is the command `bash` (judged by rules);
 * a shell reading its script from stdin runs a literal heredoc's body, or something unseen
 * (`curl … | sh`, `sh < file`).
 */
function unwrapShell(name: string, args: readonly ShellWord[], context: UnwrapContext): Unwrapped {
  let index = 0;
  let runsString = false;
  let readsStdin = false;
  while (index < args.length) {
    const word = args[index] as ShellWord;
    const value = literalValue(word);
    if (value === undefined) {
      if (word.text.startsWith("-") || word.text.startsWith("+") || runsString) break;
      // `sh <(echo 'rm x')`, `bash "$f"`: a script file only known at run time.
      return { type: "opaque", reason: `${name} runs the script ${word.text}, only known when bash runs it` };
    }
    if (value === "--" || value === "-") {
      index++;
      break;
    }
    if (!/^[-+]/.test(value)) break;
    index++;
    if (value === "--rcfile" || value === "--init-file")
      return { type: "opaque", reason: `${name} ${value} runs a startup file the parser does not read` };
    if (SHELL_VALUE_OPTIONS.has(value)) {
      index++;
      continue;
    }
    if (!value.startsWith("--") && value.slice(1).includes("c")) runsString = true;
    if (!value.startsWith("--") && value.slice(1).includes("s")) readsStdin = true;
  }
  if (!runsString) {
    const file = literalValue(args[index]);
    const fromStdin = file === undefined || STDIN_FILES.has(file);
    // `bash /dev/fd/3 3<<<'rm x'`: a script handed over on a descriptor, not a file in the workspace.
    if (file !== undefined && !fromStdin && /^\/(dev|proc)\//.test(file))
      return { type: "opaque", reason: `${name} runs the script ${file}, which the parser cannot read` };
    if (index < args.length && !readsStdin && !fromStdin) return { type: "plain" };
    if (context.stdinScript !== undefined) return { type: "script", scripts: [context.stdinScript] };
    return {
      type: "opaque",
      reason: `${name} reads its script from standard input, which the parser cannot see`,
    };
  }
  const script = args[index];
  // `printf 'rm x' | xargs sh -c`: the script is an argument read from stdin.
  if (script === undefined && context.extraArguments === true)
    return { type: "opaque", reason: `${name} -c runs a script read from standard input` };
  return literalScript(`${name} -c`, script === undefined ? [] : [script], args);
}

/** Script operands that name the shell's standard input. */
const STDIN_FILES = new Set(["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"]);

const withoutEndOfOptions = (args: readonly ShellWord[]): readonly ShellWord[] =>
  literalValue(args[0]) === "--" ? args.slice(1) : args;

/** `xargs -I{} sh -c '{}'`: words holding the replace string are only known at run time. */
function withReplacedArguments(
  parsedFlags: readonly ParsedFlag[],
  operands: readonly ShellWord[],
): readonly ShellWord[] {
  const flag = parsedFlags.find((each) => each.name === "I" || each.name === "replace");
  if (flag === undefined) return operands;
  const replace = literalValue(flag.value) ?? "{}";
  return operands.map((word, index) =>
    index > 0 && word.text.includes(replace) ? { kind: "dynamic", text: word.text } : word,
  );
}

function unwrapTrap(all: readonly ShellWord[]): Unwrapped {
  const args = withoutEndOfOptions(all);
  const first = args[0];
  const value = literalValue(first);
  if (first === undefined || value === "-l" || value === "-p" || value === "-P" || value === "-")
    return { type: "plain" };
  if (args.length === 1) return { type: "plain" };
  return literalScript("trap", [first], args);
}

function unwrapWatch(args: readonly ShellWord[]): Unwrapped {
  const parsed = parseArguments(args, WATCH_FLAGS, { stopAtOperand: true });
  if (!parsed.ok)
    return { type: "opaque", reason: `watch with ${parsed.reason} runs a command that cannot be checked` };
  if (hasFlag(parsed.flags, "x", "exec")) {
    return { type: "wrapper", command: parsed.operands, assignments: [], extraArguments: false };
  }
  // Without -x, watch passes its arguments joined by spaces to `sh -c`.
  return literalScript("watch", parsed.operands, parsed.operands);
}

/** `find … -exec cmd {} ;` runs cmd for each file found. */
function unwrapFind(args: readonly ShellWord[]): Unwrapped {
  const commands: ShellWord[][] = [];
  for (let index = 0; index < args.length; index++) {
    if (!FIND_EXEC.has(literalValue(args[index]) ?? "")) continue;
    const command: ShellWord[] = [];
    for (index++; index < args.length; index++) {
      const word = args[index] as ShellWord;
      const value = literalValue(word);
      if (value === ";" || value === "+") break;
      // `-exec sh -c {} ;`: `{}` becomes a file's name, only known at run time.
      command.push(word.text.includes("{}") ? { kind: "dynamic", text: word.text } : word);
    }
    if (command.length > 0) commands.push(command);
  }
  return commands.length === 0 ? { type: "plain" } : { type: "also", commands };
}

/** The script a command runs when every word of it is literal (joined with spaces, as eval does). */
function literalScript(
  what: string,
  scriptWords: readonly ShellWord[],
  all: readonly ShellWord[],
): Unwrapped {
  if (scriptWords.length === 0) return { type: "plain" };
  const values = scriptWords.map(literalValue);
  if (values.some((value) => value === undefined)) {
    const shown =
      scriptWords.find((word) => word.kind !== "literal")?.text ?? all.map((word) => word.text).join(" ");
    return { type: "opaque", reason: `${what} runs ${shown}, a script only known when bash runs it` };
  }
  return { type: "script", scripts: [values.join(" ")] };
}
