/**
 * `forkloop`'s command line as a function: `main(argv, context)` runs one command with the
 * streams, environment and working directory it is given, and `runCommandLine` adds what the
 * process does with a failure (the message on stderr, the exit code). The bin (main.ts) calls it
 * with the process's own; tests call it in-process (`@forkloop/cli/testing`), so nothing here may
 * read or change process-wide state.
 */
import { FORKLOOP_VERSION } from "@forkloop/sdk/version";
import { terminalStream } from "@forkloop/tools";
import { CliError } from "./cli-error.js";
import type { CommandContext } from "./command-context.js";
import { EXIT, type ExitCode, exitCodeForError } from "./exit-codes.js";
import { closestFlag } from "./flags.js";

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
Telemetry (off by default): CLAUDE_CODE_ENABLE_TELEMETRY=1 with OTEL_TRACES_EXPORTER=otlp and/or
OTEL_METRICS_EXPORTER=otlp exports spans and metrics over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT
(OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf|http/json, OTEL_METRIC_EXPORT_INTERVAL=ms).
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

/** `forkloop -p "…" [flags]`, flags before or after, as `claude -p`: that is `forkloop run`. */
function isPrint(argv: readonly string[]): boolean {
  return argv[0]?.startsWith("-") === true && argv.some((arg) => arg === "-p" || arg === "--print");
}

async function main(argv: readonly string[], context: CommandContext): Promise<ExitCode> {
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
  const print = isPrint(argv);
  const load = COMMANDS[print ? "run" : name];
  if (!load) {
    const suggestion = closestFlag(name, Object.keys(COMMANDS));
    throw new CliError(
      `unknown command "${name}".${suggestion ? ` Did you mean \`forkloop ${suggestion}\`?` : ""}\n\n${MAIN_USAGE}`,
    );
  }
  return (await load())(print ? argv : rest, context);
}

/**
 * R-S14: what forkloop shows has its control characters escaped (terminal-text.ts in
 * @forkloop/tools) — every status line on stderr, and the whole stdout of every command but
 * `run`: sessions, replay, batch and its status, report and trust print stored text, file names
 * and paths. `run` prints the model's answer as it is (apps/cli/README.md says so).
 */
function withTerminalViews(argv: readonly string[], context: CommandContext): CommandContext {
  const run = argv[0] === "run" || isPrint(argv);
  return {
    ...context,
    stdout: run ? context.stdout : terminalStream(context.stdout),
    stderr: terminalStream(context.stderr),
  };
}

export interface CommandLineOptions {
  /** false: the streams as given, unescaped — the controls of the R-S14 tests (what printed before). */
  readonly terminalViews?: boolean;
}

/**
 * Runs `main` and turns a failure into what the user sees: a message naming the problem and the
 * fix on stderr (exit 2 for bad input, damaged state, a full or read-only disk), and a stack trace
 * only for a bug (exit 1).
 */
export async function runCommandLine(
  argv: readonly string[],
  given: CommandContext,
  options: CommandLineOptions = {},
): Promise<ExitCode> {
  const context = options.terminalViews === false ? given : withTerminalViews(argv, given);
  try {
    return await main(argv, context);
  } catch (error) {
    // Damaged state, a full or read-only disk … are messages; only bugs keep a stack (R-R4, R-A7).
    // Loaded here, not at start: it needs the SDK, which `--version` and `sim` do not.
    const { describeError } = await import("@forkloop/sdk");
    const described = describeError(error);
    context.stderr.write(`forkloop: ${described.message}\n`);
    return exitCodeForError(described.code);
  }
}
