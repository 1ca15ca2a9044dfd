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
  const out: string[] = [];
  let inList = false;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === "--") return [...out, ...argv.slice(index)];
    if (inList && !arg.startsWith("-") && isValue(arg)) {
      out.push(flag, arg);
      continue;
    }
    inList = false;
    out.push(arg);
    if (arg === flag && index + 1 < argv.length) {
      out.push(argv[++index]!); // the flag's own value, whatever it is
      inList = true;
    } else if (arg.startsWith(`${flag}=`)) {
      inList = true;
    }
  }
  return out;
}
