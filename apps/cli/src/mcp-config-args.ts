import { spreadVariadicArgs } from "./variadic-args.js";

const FLAG = "--mcp-config";

/** A further `--mcp-config` value: a JSON object, or a file named `*.json`. */
function isConfigValue(arg: string): boolean {
  return arg.trimStart().startsWith("{") || /\.json$/i.test(arg);
}

/**
 * `--mcp-config a.json b.json '{"mcpServers":…}'` as Claude Code takes it (R-M1): a further
 * value is a JSON object or a file named `*.json`.
 */
export function spreadMcpConfigArgs(argv: readonly string[]): string[] {
  return spreadVariadicArgs(argv, FLAG, isConfigValue);
}
