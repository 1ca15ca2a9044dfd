#!/usr/bin/env node
/**
 * `forkloop`: headless agent runs, batch jobs over whole codebases, the standalone simulator,
 * and session inspection. Exit codes: see exit-codes.ts and apps/cli/README.md. This file is the
 * process around the command line (cli.ts): the process's streams, signals and exit.
 */
import { shutdownTelemetry, startTelemetry, TelemetryConfigError } from "@forkloop/orchestrator/telemetry";
import { runCommandLine } from "./cli.js";
import type { CommandContext } from "./command-context.js";
import { type ExitCode, exitCodeForError } from "./exit-codes.js";
import { installProcessStop } from "./process-stop.js";

/**
 * R-V5: OpenTelemetry export when the environment asks (CLAUDE_CODE_ENABLE_TELEMETRY=1 and an
 * OTEL_*_EXPORTER=otlp); off, this loads nothing. A variable forkloop cannot follow is its exit
 * code from the one table (2); undefined when telemetry started or is off.
 */
async function startProcessTelemetry(): Promise<ExitCode | undefined> {
  try {
    await startTelemetry(process.env);
    return undefined;
  } catch (error) {
    if (!(error instanceof TelemetryConfigError)) throw error;
    process.stderr.write(`forkloop: ${error.message}\n`);
    return exitCodeForError(error.code);
  }
}

async function runFromProcess(): Promise<void> {
  const stop = installProcessStop();
  const context: CommandContext = {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    signal: stop.signal,
    beforeForcedExit: (handler) => stop.beforeForcedExit(handler),
    oneShotProcess: true,
  };
  const telemetryFailed = await startProcessTelemetry();
  if (telemetryFailed !== undefined) process.exit(telemetryFailed);
  const code = await runCommandLine(process.argv.slice(2), context);
  // What the run recorded is exported before the process goes (bounded by the exporters' timeouts).
  await shutdownTelemetry();
  // Let stdout drain (a pipe may be slow), then exit: worker threads or sockets must not keep us alive.
  const exitCode = stop.exitCode(code);
  if (stop.stdoutOpen()) process.stdout.write("", () => process.exit(exitCode));
  else process.exit(exitCode);
}

await runFromProcess();
