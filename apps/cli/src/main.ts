#!/usr/bin/env node
/**
 * `forkloop`: headless agent runs, batch jobs over whole codebases, the standalone simulator,
 * and session inspection. Exit codes: see exit-codes.ts and apps/cli/README.md. This file is the
 * process around the command line (cli.ts): the process's streams, signals and exit.
 */
import { runCommandLine } from "./cli.js";
import type { CommandContext } from "./command-context.js";
import { installProcessStop } from "./process-stop.js";

async function runFromProcess(): Promise<void> {
  const stop = installProcessStop();
  const context: CommandContext = {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    signal: stop.signal,
  };
  const code = await runCommandLine(process.argv.slice(2), context);
  // Let stdout drain (a pipe may be slow), then exit: worker threads or sockets must not keep us alive.
  const exitCode = stop.exitCode(code);
  if (stop.stdoutOpen()) process.stdout.write("", () => process.exit(exitCode));
  else process.exit(exitCode);
}

await runFromProcess();
