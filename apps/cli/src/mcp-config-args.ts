import { resolve } from "node:path";

const FLAG = "--mcp-config";

/** A further `--mcp-config` value: a JSON object, or a file named `*.json`. */
function isConfigValue(arg: string): boolean {
  return arg.trimStart().startsWith("{") || /\.json$/i.test(arg);
}

/**
 * Claude Code's `--mcp-config <configs...>` takes several values after one flag
 * (`--mcp-config a.json b.json '{"mcpServers":…}'`); node's parseArgs takes one, and the rest
 * would silently become the prompt (R-M1). Each further argument that is a config — a
 * JSON object or a `*.json` file — gets a `--mcp-config` of its own, so a prompt after the list
 * stays the prompt. Arguments after `--` are left alone.
 */
export function spreadMcpConfigArgs(argv: readonly string[]): string[] {
  const out: string[] = [];
  let inList = false;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === "--") return [...out, ...argv.slice(index)];
    if (inList && !arg.startsWith("-") && isConfigValue(arg)) {
      out.push(FLAG, arg);
      continue;
    }
    inList = false;
    out.push(arg);
    if (arg === FLAG && index + 1 < argv.length) {
      out.push(argv[++index]!); // the flag's own value, whatever it is
      inList = true;
    } else if (arg.startsWith(`${FLAG}=`)) {
      inList = true;
    }
  }
  return out;
}

/**
 * One `--mcp-config` value as the SDK takes it: JSON as is, a file made absolute against `cwd` —
 * where the command was typed for run and worker (as --settings and --add-dir), not their --cwd.
 */
export function mcpConfigFlag(value: string, cwd: string): string {
  return value.trimStart().startsWith("{") ? value : resolve(cwd, value);
}
