import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { CommandContext } from "./command-context.js";
import type { RunFlags } from "./commands/run-flags.js";

/**
 * `--debug [filter]` / `--debug-file FILE`: the verbose lines (tool calls, retries, compactions)
 * in FILE, else in `<forkloop home>/debug/<session id>.txt` — as Claude Code writes its debug log to
 * `~/.claude/debug/<session id>.txt`, leaving stdout and stderr as without the flag. The file is
 * opened at the first line.
 */
export function debugLog(
  flags: RunFlags,
  context: CommandContext,
  userDir: string,
): { write: (line: string | undefined, sessionId: string) => void; close: () => Promise<void> } | undefined {
  const file = flags["debug-file"];
  if (file === undefined && flags.debug === undefined) return undefined;
  let stream: WriteStream | undefined;
  return {
    write: (line, sessionId) => {
      if (line === undefined) return;
      if (stream === undefined) {
        const path =
          file === undefined ? join(userDir, "debug", `${sessionId}.txt`) : resolve(context.cwd, file);
        mkdirSync(dirname(path), { recursive: true });
        stream = createWriteStream(path, { flags: "a" });
      }
      stream.write(`${line}\n`);
    },
    close: () => new Promise((done) => (stream === undefined ? done() : stream.end(done))),
  };
}
