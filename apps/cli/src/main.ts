#!/usr/bin/env node
/**
 * `forkloop`: headless agent runs, batch jobs over whole codebases, the standalone simulator,
 * and session inspection. Exit codes: see exit-codes.ts and apps/cli/README.md.
 */
import { OptionsError } from "@forkloop/sdk/errors";
import { FORKLOOP_VERSION } from "@forkloop/sdk/version";
import { CliError } from "./cli-error.js";
import type { CommandContext } from "./command-context.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { closestFlag } from "./flags.js";
import { installProcessStop } from "./process-stop.js";

export const MAIN_USAGE = `Usage: forkloop <command> [flags]

Commands:
  run "<prompt>"        one headless agent run (piped stdin is appended; \`forkloop -p\` is the same)
  batch                 one sub-agent per file or JSONL item, in parallel, with a crash-safe journal
  worker --queue URL    run the items of batches distributed over Redis (batch --queue URL)
  sim                   run the simulator as a standalone Anthropic-compatible server
  sessions list|show    list saved sessions or show one
  replay <session>      print a session's loop state transitions turn by turn
  trust [DIR]           let a project's own settings widen permissions (allow rules, hooks, env)
  report <id | FILE>    a self-contained HTML report of a session or a batch (charts, fork tree, messages)

Model: ANTHROPIC_API_KEY (and optional ANTHROPIC_BASE_URL) selects the real API or a compatible
server; without it the built-in simulator answers (simulated replies, not a real model).
Environment: MAX_THINKING_TOKENS=N (run, batch: extended thinking with that budget),
FORKLOOP_MODELS=FILE (model specs, e.g. a small context window, for the client and
the embedded simulator), FORKLOOP_SIM_LATENCY=none|realistic, FORKLOOP_SIM_FAULTS=SPEC.
Run \`forkloop <command> --help\` for a command's flags; \`forkloop --version\` prints the version.`;

type Command = (argv: readonly string[], context: CommandContext) => Promise<ExitCode>;

// Loaded on demand so `forkloop sim` does not pay for the orchestrator and its worker pool.
const COMMANDS: Record<string, () => Promise<Command>> = {
  run: async () => (await import("./commands/run.js")).runCommand,
  batch: async () => (await import("./commands/batch.js")).batchCommand,
  sim: async () => (await import("./commands/sim.js")).simCommand,
  sessions: async () => (await import("./commands/sessions.js")).sessionsCommand,
  trust: async () => (await import("./commands/trust.js")).trustCommand,
  replay: async () => (await import("./commands/replay.js")).replayCommand,
  report: async () => (await import("./commands/report.js")).reportCommand,
  worker: async () => (await import("./commands/worker.js")).workerCommand,
};

export async function main(argv: readonly string[], context: CommandContext): Promise<ExitCode> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    (name === undefined ? context.stderr : context.stdout).write(`${MAIN_USAGE}\n`);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === "--version" || name === "-v") {
    // Claude Code's shape (`2.1.197 (Claude Code)`), so scripts that parse one parse the other.
    context.stdout.write(`${FORKLOOP_VERSION} (forkloop)\n`);
    return EXIT.ok;
  }
  // `forkloop -p "…" [flags]`, flags before or after, as `claude -p`: that is `forkloop run`.
  const print = name.startsWith("-") && argv.some((arg) => arg === "-p" || arg === "--print");
  const load = COMMANDS[print ? "run" : name];
  if (!load) {
    const suggestion = closestFlag(name, Object.keys(COMMANDS));
    throw new CliError(
      `unknown command "${name}".${suggestion ? ` Did you mean \`forkloop ${suggestion}\`?` : ""}\n\n${MAIN_USAGE}`,
    );
  }
  return (await load())(print ? argv : rest, context);
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
  };
  let code: ExitCode;
  try {
    code = await main(process.argv.slice(2), context);
  } catch (error) {
    // Issue 11: damaged state, a full or read-only disk … are messages; only bugs keep a stack.
    // Loaded here, not at start: it needs the orchestrator, which `--version` and `sim` do not.
    const { asStateError } = await import("./state-errors.js");
    const state = asStateError(error);
    if (error instanceof CliError || error instanceof OptionsError) {
      // A bad settings file, environment variable or models file from the SDK is exit 2 too.
      process.stderr.write(`forkloop: ${error.message}\n`);
      code = error instanceof CliError ? error.exitCode : EXIT.usage;
    } else if (state) {
      process.stderr.write(`forkloop: ${state.message}\n`);
      code = state.exitCode;
    } else {
      process.stderr.write(
        `forkloop: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      code = EXIT.internal;
    }
  }
  // Let stdout drain (a pipe may be slow), then exit: worker threads or sockets must not keep us alive.
  const exitCode = stop.exitCode(code);
  if (stop.stdoutOpen()) process.stdout.write("", () => process.exit(exitCode));
  else process.exit(exitCode);
}

await runFromProcess();
