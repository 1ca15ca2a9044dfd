import { literalValue, type ShellWord } from "./shell-word.js";

/**
 * A variable name bash does not evaluate: `x`, or an element with an integer index `a[2]`.
 * Bash evaluates any other index as arithmetic, and `a[$(cmd)]` there runs cmd even when the text
 * reached bash single-quoted (`test -v 'a[$(cmd)]'`, `read 'a[$(cmd)]'`).
 */
export function isPlainVariableName(text: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*(\[\d+\])?$/.test(text);
}

/** `declare`, `local` …: `-i` makes later assignments arithmetic, `-n` makes the value a name to evaluate. */
const DECLARATIONS = new Set(["declare", "typeset", "local", "export", "readonly"]);
/** Builtins whose operands are variable names (or, after `-v`/`-p`, one of their option values is). */
const NAME_OPERANDS = new Set(["read", "mapfile", "readarray", "unset", "wait"]);

/**
 * Why a bash builtin would evaluate one of its (even quoted) arguments as code, or undefined
 * (R-S1: what the parser cannot see needs permission). Bash evaluates variable names
 * with an index as arithmetic, so `printf -v 'a[$(rm x)]' 1`, `test -v 'a[$(rm x)]'`,
 * `declare 'a[$(rm x)]=1'` and `let 'a[$(rm x)]'` all run `rm x`; `alias` defines a command that
 * runs under another name (with `expand_aliases`, or in an interactive shell); `source` and `.`
 * run a file the parser never reads.
 */
export function builtinEvaluation(name: string, args: readonly ShellWord[]): string | undefined {
  const values = args.map(literalValue);
  const unseen = (index: number): boolean => {
    const value = values[index];
    return value === undefined || !isPlainVariableName(value);
  };
  switch (name) {
    case "let":
      return "let evaluates its arguments as arithmetic, which can run commands hidden in variables";
    case "alias":
      return args.some((word) => word.text.includes("="))
        ? "alias defines a command under another name"
        : undefined;
    case "source":
    case ".":
      return `${name} runs a file the parser does not read`;
    case "test":
    case "[":
      for (let index = 0; index < args.length - 1; index++) {
        if ((values[index] === "-v" || values[index] === "-R") && unseen(index + 1))
          return `${name} ${values[index]} ${args[index + 1]?.text} evaluates the name's index as arithmetic`;
      }
      return undefined;
    case "printf": {
      const index = values.indexOf("-v");
      return index >= 0 && unseen(index + 1)
        ? `printf -v ${args[index + 1]?.text ?? ""} evaluates the name's index as arithmetic`
        : undefined;
    }
    default:
      break;
  }
  if (DECLARATIONS.has(name)) {
    for (const [index, word] of args.entries()) {
      const value = values[index];
      if (value !== undefined && /^[-+][A-Za-z]*[in]/.test(value))
        return `${name} ${value} makes bash evaluate values as arithmetic or as names`;
      // `declare 'a[$(cmd)]=1'`: a quoted word is still split into a name and a value.
      if (word.kind !== "dynamic" && word.text.includes("["))
        return `${name} ${word.text} evaluates an index as arithmetic`;
    }
    return undefined;
  }
  if (NAME_OPERANDS.has(name)) {
    const found = args.find((word) => word.kind !== "literal" || word.value.includes("["));
    return found === undefined
      ? undefined
      : `${name} ${found.text} may evaluate a name's index as arithmetic`;
  }
  return undefined;
}
