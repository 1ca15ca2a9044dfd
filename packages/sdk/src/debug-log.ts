import { appendFileSync } from "node:fs";
import { resolve } from "node:path";
import type { SDKMessage } from "./messages.js";
import type { Options } from "./options.js";
import { verboseLine } from "./run-result-text.js";

/**
 * The Agent SDK's `debug` / `debugFile` (Claude Code's `--debug` / `--debug-file`): the lines
 * `forkloop run --debug` writes — the main agent's tool calls, retries, compactions — for each
 * message the query yields, on the `stderr` option or appended to the file (relative to `cwd`).
 */
export function debugLog(
  options: Pick<Options, "debug" | "debugFile" | "cwd">,
  stderr: (data: string) => void,
): ((message: SDKMessage) => void) | undefined {
  const file = options.debugFile;
  if (file === undefined && options.debug !== true) return undefined;
  const write =
    file === undefined
      ? stderr
      : (text: string) => appendFileSync(resolve(options.cwd ?? process.cwd(), file), text);
  return (message) => {
    const line = verboseLine(message);
    if (line !== undefined) write(`${line}\n`);
  };
}
