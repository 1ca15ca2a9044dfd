/**
 * Claude Code's variadic flags (`--mcp-config <configs...>`, `--betas <betas...>`) take several
 * values after one flag; node's parseArgs takes one, and the rest would silently become the
 * prompt. Each further argument that `isValue` recognises gets a `flag` of its own, so a prompt
 * after the list stays the prompt. Arguments after `--` are left alone.
 */
export function spreadVariadicArgs(
  argv: readonly string[],
  flag: string,
  isValue: (arg: string) => boolean,
): string[] {
  return variadicArgs(argv, flag, isValue, (out, _at, arg) => out.push(flag, arg));
}

/**
 * Claude Code's variadic list flags (`--allowedTools <tools...>`, `--disallowedTools <tools...>`)
 * where forkloop's one value is already a comma list: each further argument `isValue` recognises
 * joins the flag's value, so `--allowedTools Bash TaskStop "Fix it"` allows both tools and keeps
 * the prompt. Arguments after `--` are left alone.
 */
export function joinVariadicArgs(
  argv: readonly string[],
  flag: string,
  isValue: (arg: string) => boolean,
): string[] {
  return variadicArgs(argv, flag, isValue, (out, at, arg) => {
    out[at] = `${out[at]},${arg}`;
  });
}

/** `argv` with each further value of `flag` handed to `add` (`at`: where the flag's value is in `out`). */
function variadicArgs(
  argv: readonly string[],
  flag: string,
  isValue: (arg: string) => boolean,
  add: (out: string[], at: number, arg: string) => void,
): string[] {
  const out: string[] = [];
  /** Where in `out` the list's first value is (-1: not in a list). */
  let at = -1;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === "--") return [...out, ...argv.slice(index)];
    if (at >= 0 && !arg.startsWith("-") && isValue(arg)) {
      add(out, at, arg);
      continue;
    }
    at = -1;
    out.push(arg);
    if (arg === flag && index + 1 < argv.length) {
      out.push(argv[++index]!); // the flag's own value, whatever it is
      at = out.length - 1;
    } else if (arg.startsWith(`${flag}=`)) {
      at = out.length - 1;
    }
  }
  return out;
}
