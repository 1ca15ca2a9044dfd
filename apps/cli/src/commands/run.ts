import { resolve } from "node:path";
import { plural } from "@forkloop/batch";
import type { TerminalReason, ThinkingConfigParam } from "@forkloop/loop-core";
import { repairTranscript, sessionTranscriptPath } from "@forkloop/orchestrator";
import {
  checkId,
  DEFAULT_MODEL,
  parseRunRequest,
  query,
  type SDKMessage,
  type SDKResultMessage,
  SLASH_COMMANDS,
  sessionsDir,
} from "@forkloop/sdk";
import { z } from "zod";
import { modeSchema, toolListSchema } from "../agent-options.js";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode, exitCodeForTerminal } from "../exit-codes.js";
import { parseCommand } from "../flags.js";
import { secondsFlag, TIMEOUT_FLAG_OPTIONS, TIMEOUT_FLAGS_USAGE, timeoutEnv } from "../model-timeouts.js";
import { sandboxFlagSchema } from "../sandbox-flag.js";
import { checkWritableDir } from "../state-checks.js";
import { parseTokenBudget } from "../token-budget-flag.js";
import { reportHint, writeSessionHtml } from "./report.js";
import { existingSessionPath } from "./sessions.js";

export const RUN_USAGE = `Usage: forkloop run ["<prompt>"] [flags]      (the prompt is read from stdin when omitted)

One headless agent run, like \`claude -p\`. The session is saved in <cwd>/.forkloop/sessions/.

  --output-format F       text (default: the final answer) | json (one result object) |
                          stream-json (one JSON object per line: system/init, assistant, user,
                          system/api_retry, system/compact_boundary, result)
  --include-partial-messages  with stream-json: also the raw stream events
  --model NAME            model id or alias (default ${DEFAULT_MODEL})
  --fallback-model NAME   switch to this model when the primary stays overloaded (repeatable)
  --max-turns N           stop after N turns (exit code 3)
  --permission-mode M     default | acceptEdits | plan | bypassPermissions | dontAsk | auto
                          (default: default — reads run; writes and commands need an allow rule)
  --allowed-tools LIST    allow rules, comma-separated: Edit, Bash(npm test:*), Write(src/**),
                          mcp__server (every tool of an MCP server), mcp__server__tool …
  --disallowed-tools LIST deny rules; a bare tool name also removes the tool (e.g. Bash, mcp__db)
  --mcp-config FILE       MCP servers from a file (or a JSON string) {"mcpServers": {…}} (repeatable);
                          also read: .mcp.json (trusted projects), mcpServers in settings, ~/.claude.json
  --strict-mcp-config     only the --mcp-config servers
  --sandbox MODE          Bash in bubblewrap: auto | on | off (default: auto with dontAsk, else off)
  --trust-project         use this project's own settings as they are for this run (allow rules,
                          hooks, env, a wider mode); without it, or \`forkloop trust\`, they only narrow
  --append-system-prompt TEXT  appended to the system prompt
  --cwd DIR               the project to work in (default: the current directory)
  --budget TOKENS         a token budget for the turn, e.g. +500k (R-L14)
  --resume SESSION        continue a saved session with this prompt
  --repair                with --resume: a damaged transcript keeps its intact records (the
                          damaged file is moved aside), then the session continues
  --verbose               with text output: tool calls and retries on stderr
  --report                write the session's HTML report at the end and print its path (stderr);
                          without it the command that writes and opens it is printed
${TIMEOUT_FLAGS_USAGE}

Slash commands (the prompt's first word): ${SLASH_COMMANDS.join(", ")} — with --resume,
compacts the session now (one summary request, no model turn); instructions steer the summary.

Exit codes: 0 completed, 3 max turns, 4 model error, 5 stopped by a hook, 8 context limit,
9 /compact failed, 130 interrupted, 2 bad flags. Ctrl+C once interrupts cleanly (transcript stays consistent),
twice exits at once.`;

const schema = z.object({
  help: z.boolean().optional(),
  "output-format": z
    .enum(["text", "json", "stream-json"], { message: "must be text, json or stream-json" })
    .optional(),
  "include-partial-messages": z.boolean().optional(),
  model: z.string().min(1, "give a model id, e.g. --model claude-sonnet-4-6").optional(),
  "fallback-model": z.array(z.string().min(1)).optional(),
  "max-turns": z
    .string()
    .regex(/^\d+$/, "must be a whole number, e.g. --max-turns 10")
    .transform(Number)
    .refine((value) => value >= 1, "must be at least 1")
    .optional(),
  "permission-mode": modeSchema.optional(),
  "allowed-tools": toolListSchema.optional(),
  "disallowed-tools": toolListSchema.optional(),
  "mcp-config": z.array(z.string().min(1, "give a file, e.g. --mcp-config mcp.json")).optional(),
  "strict-mcp-config": z.boolean().optional(),
  "trust-project": z.boolean().optional(),
  sandbox: sandboxFlagSchema.optional(),
  "append-system-prompt": z.string().optional(),
  cwd: z.string().min(1).optional(),
  budget: z
    .string()
    .transform((text, ctx) => {
      const parsed = parseTokenBudget(text);
      if (parsed.ok) return parsed.tokens;
      ctx.addIssue({ code: "custom", message: parsed.error });
      return z.NEVER;
    })
    .optional(),
  resume: z.string().min(1).optional(),
  repair: z.boolean().optional(),
  verbose: z.boolean().optional(),
  report: z.boolean().optional(),
  "headers-timeout": secondsFlag("headers-timeout", 120).optional(),
  "idle-timeout": secondsFlag("idle-timeout", 90).optional(),
});

async function readStdin(stdin: CommandContext["stdin"]): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString("utf8");
}

export async function runCommand(argv: readonly string[], context: CommandContext): Promise<ExitCode> {
  const { flags, positionals } = parseCommand(
    {
      command: "run",
      usage: RUN_USAGE,
      schema,
      options: {
        help: { type: "boolean", short: "h" },
        "output-format": { type: "string" },
        "include-partial-messages": { type: "boolean" },
        model: { type: "string" },
        "fallback-model": { type: "string", multiple: true },
        "max-turns": { type: "string" },
        "permission-mode": { type: "string" },
        "allowed-tools": { type: "string" },
        "disallowed-tools": { type: "string" },
        "mcp-config": { type: "string", multiple: true },
        "strict-mcp-config": { type: "boolean" },
        "trust-project": { type: "boolean" },
        sandbox: { type: "string" },
        "append-system-prompt": { type: "string" },
        cwd: { type: "string" },
        budget: { type: "string" },
        resume: { type: "string" },
        repair: { type: "boolean" },
        verbose: { type: "boolean" },
        report: { type: "boolean" },
        ...TIMEOUT_FLAG_OPTIONS,
      },
    },
    argv,
  );
  if (flags.help) {
    context.stdout.write(`${RUN_USAGE}\n`);
    return EXIT.ok;
  }
  let prompt = positionals.join(" ");
  if (prompt.trim() === "" && context.stdin.isTTY !== true) prompt = await readStdin(context.stdin);
  if (prompt.trim() === "") {
    throw new CliError(
      `forkloop run needs a prompt: \`forkloop run "Summarize README.md"\` or pipe it on stdin.`,
    );
  }
  // `/compact` without a session is refused here, with the CLI's wording, before anything starts.
  const request = parseRunRequest(prompt);
  if (request.kind === "compact" && flags.resume === undefined) {
    throw new CliError(
      `run: /compact compacts a saved session: \`forkloop run --resume <session> "/compact [instructions]"\` (list them with \`forkloop sessions list\`).`,
    );
  }
  const cwd = resolve(context.cwd, flags.cwd ?? ".");
  const sessions = sessionsDir(cwd);
  // Issue 11: a sessions directory that cannot be written fails now, naming the reason.
  await checkWritableDir(sessions, {
    role: "sessions directory",
    fix: "Transcripts go to <cwd>/.forkloop/sessions/; use another --cwd if it cannot be written.",
  });
  if (flags.repair && flags.resume === undefined) {
    throw new CliError("--repair only applies to --resume SESSION (it repairs that session's transcript).");
  }
  if (flags.resume !== undefined) {
    const path = await existingSessionPath(sessions, checkId("session", flags.resume));
    if (flags.repair) await repairSession(path, context);
  }
  const format = flags["output-format"] ?? "text";
  const thinking = thinkingFromEnv(context.env.MAX_THINKING_TOKENS);
  const abortController = new AbortController();
  const onInterrupt = () => abortController.abort(context.signal.reason);
  if (context.signal.aborted) onInterrupt();
  else context.signal.addEventListener("abort", onInterrupt, { once: true });

  // argv → options → query() → printing: everything else is the SDK's, as `claude -p` is the engine's.
  const run = query({
    prompt,
    options: {
      cwd,
      // The deadline flags travel as the variables the model endpoint reads (issue 11).
      env: { ...context.env, ...timeoutEnv(flags) },
      stderr: (line) => context.stderr.write(line),
      abortController,
      // The CLI reads every settings file, as Claude Code's -p does.
      settingSources: ["user", "project", "local"],
      // `--permission-mode bypassPermissions` on the command line is the explicit second switch.
      allowDangerouslySkipPermissions: true,
      includePartialMessages: flags["include-partial-messages"] ?? false,
      ...(flags.model === undefined ? {} : { model: flags.model }),
      ...(flags["fallback-model"] === undefined ? {} : { fallbackModel: flags["fallback-model"] }),
      ...(flags["max-turns"] === undefined ? {} : { maxTurns: flags["max-turns"] }),
      ...(flags["permission-mode"] === undefined ? {} : { permissionMode: flags["permission-mode"] }),
      ...(flags["allowed-tools"] === undefined ? {} : { allowedTools: flags["allowed-tools"] }),
      ...(flags["disallowed-tools"] === undefined ? {} : { disallowedTools: flags["disallowed-tools"] }),
      ...(flags["append-system-prompt"] === undefined
        ? {}
        : { systemPrompt: { type: "preset", preset: "claude_code", append: flags["append-system-prompt"] } }),
      ...(flags.budget === undefined ? {} : { tokenBudget: flags.budget }),
      ...(thinking === undefined ? {} : { thinking }),
      ...(flags.resume === undefined ? {} : { resume: flags.resume }),
      ...(flags["trust-project"] === undefined ? {} : { trustProject: flags["trust-project"] }),
      ...(flags["mcp-config"] === undefined ? {} : { mcpConfig: flags["mcp-config"] }),
      ...(flags["strict-mcp-config"] === undefined ? {} : { strictMcpConfig: flags["strict-mcp-config"] }),
      ...(flags.sandbox === undefined ? {} : { sandbox: flags.sandbox }),
    },
  });
  let result: SDKResultMessage | undefined;
  try {
    for await (const message of run) {
      if (message.type === "result") result = message;
      if (format === "stream-json") context.stdout.write(`${JSON.stringify(message)}\n`);
      else if (format === "text" && flags.verbose) describeVerbose(message, context);
    }
  } finally {
    context.signal.removeEventListener("abort", onInterrupt);
  }
  if (result === undefined) throw new Error("the query ended without a result message");
  const code = report(result, {
    format,
    verbose: flags.verbose === true,
    compact: request.kind === "compact",
    context,
  });
  await announceReport(result.session_id, { cwd, cwdFlag: flags.cwd, write: flags.report ?? false }, context);
  return code;
}

/** `MAX_THINKING_TOKENS=N` (as in Claude Code): extended thinking with that budget. */
function thinkingFromEnv(value: string | undefined): ThinkingConfigParam | undefined {
  if (value === undefined || value === "" || value === "0") return undefined;
  const tokens = Number(value);
  if (!Number.isInteger(tokens) || tokens < 1024) {
    throw new CliError(
      `MAX_THINKING_TOKENS=${value}: give a whole number of at least 1024 (the API's smallest thinking budget), e.g. MAX_THINKING_TOKENS=4000, or 0 for no thinking.`,
    );
  }
  return { type: "enabled", budget_tokens: tokens };
}

/**
 * Issue 17: the end of a run says how to see it — the report's path with `--report`, else the
 * command that writes and opens it. A report that cannot be written is a notice, not a failure.
 */
async function announceReport(
  sessionId: string,
  options: { cwd: string; cwdFlag: string | undefined; write: boolean },
  context: CommandContext,
): Promise<void> {
  if (!options.write) {
    context.stderr.write(`report: ${reportHint(sessionId, options.cwdFlag)}\n`);
    return;
  }
  try {
    const transcript = sessionTranscriptPath(sessionsDir(options.cwd), sessionId);
    context.stderr.write(`report: ${await writeSessionHtml(transcript, options.cwd)}\n`);
  } catch (error) {
    context.stderr.write(`forkloop run: the report could not be written: ${(error as Error).message}\n`);
  }
}

/** The result as the chosen format prints it, and the exit code its terminal reason maps to. */
function report(
  result: SDKResultMessage,
  run: {
    format: "text" | "json" | "stream-json";
    verbose: boolean;
    compact: boolean;
    context: CommandContext;
  },
): ExitCode {
  const { context } = run;
  if (run.format === "json") context.stdout.write(`${JSON.stringify(result)}\n`);
  if (run.compact) {
    if (run.format === "text") {
      if (!result.is_error) context.stdout.write(`${result.result}\n`);
      else context.stderr.write(`forkloop run: ${result.result}\n`);
    }
    return result.is_error ? EXIT.compactFailed : EXIT.ok;
  }
  const reason = result.terminal_reason as TerminalReason;
  if (run.format === "text") {
    if (reason === "completed") context.stdout.write(`${result.result}\n`);
    else {
      const detail = result.result === reason ? "" : `: ${result.result}`;
      context.stderr.write(`forkloop run: ${reason}${detail}\n`);
    }
    if (run.verbose) {
      context.stderr.write(
        `session ${result.session_id} · ${plural(result.num_turns, "turn")} · $${result.total_cost_usd.toFixed(4)}\n`,
      );
    }
  }
  return exitCodeForTerminal(reason);
}

function describeVerbose(line: SDKMessage, context: CommandContext): void {
  if (line.type === "assistant" && line.parent_tool_use_id === null) {
    const block = line.message.content[0];
    if (block?.type === "tool_use") context.stderr.write(`→ ${block.name} ${JSON.stringify(block.input)}\n`);
  } else if (line.type === "system" && line.subtype === "api_retry") {
    context.stderr.write(
      `retrying (attempt ${line.attempt}/${line.max_retries}) after ${line.retry_delay_ms} ms: ${line.error}\n`,
    );
  } else if (line.type === "system" && line.subtype === "compact_boundary") {
    context.stderr.write(
      `compacted: ${line.compact_metadata.pre_tokens} → ${line.compact_metadata.post_tokens} tokens\n`,
    );
  }
}

/** Issue 11 `--repair`: keep the intact records of a damaged transcript, say what was done. */
async function repairSession(path: string, context: CommandContext): Promise<void> {
  const repaired = await repairTranscript(path);
  context.stderr.write(
    repaired
      ? `forkloop: repaired ${path}: kept its ${plural(repaired.keptRecords, "intact record")}; the damaged file is ${repaired.backupPath}\n`
      : `forkloop: ${path} is not damaged; nothing to repair\n`,
  );
}
