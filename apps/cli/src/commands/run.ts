import { resolve } from "node:path";
import type { PermissionMode, Terminal } from "@forkloop/loop-core";
import type { SessionCompactResult } from "@forkloop/orchestrator";
import {
  checkId,
  createHeadlessPermissions,
  DEFAULT_MODEL,
  loadRunSettings,
  mergeRules,
  resolveModelSource,
  type StreamJsonLine,
  StreamJsonWriter,
  selectTools,
  sessionsDir,
  startRunSession,
} from "@forkloop/sdk";
import { z } from "zod";
import { modeSchema, toolListSchema } from "../agent-options.js";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode, exitCodeForTerminal } from "../exit-codes.js";
import { parseCommand } from "../flags.js";
import { plural } from "../plural.js";
import { parseRunRequest, SLASH_COMMANDS } from "../slash-commands.js";
import { parseTokenBudget } from "../token-budget-flag.js";
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
  --allowed-tools LIST    allow rules, comma-separated: Edit, Bash(npm test:*), Write(src/**) …
  --disallowed-tools LIST deny rules; a bare tool name also removes the tool (e.g. Bash)
  --append-system-prompt TEXT  appended to the system prompt
  --cwd DIR               the project to work in (default: the current directory)
  --budget TOKENS         a token budget for the turn, e.g. +500k (R-L14)
  --resume SESSION        continue a saved session with this prompt
  --verbose               with text output: tool calls and retries on stderr

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
  verbose: z.boolean().optional(),
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
        "append-system-prompt": { type: "string" },
        cwd: { type: "string" },
        budget: { type: "string" },
        resume: { type: "string" },
        verbose: { type: "boolean" },
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
  // Slash commands are handled here, before the loop: `/compact` runs no model turn, so it does not
  // fit loop-core's queued commands (R-L2), which become user messages of the next turn.
  const request = parseRunRequest(prompt);
  if (request.kind === "compact" && flags.resume === undefined) {
    throw new CliError(
      `run: /compact compacts a saved session: \`forkloop run --resume <session> "/compact [instructions]"\` (list them with \`forkloop sessions list\`).`,
    );
  }
  const cwd = resolve(context.cwd, flags.cwd ?? ".");
  const sessions = sessionsDir(cwd);
  if (flags.resume !== undefined) await existingSessionPath(sessions, checkId("session", flags.resume));
  const format = flags["output-format"] ?? "text";
  const settings = await loadRunSettings(cwd, context.env.HOME);
  const model = flags.model ?? settings.model ?? DEFAULT_MODEL;
  const permissionMode: PermissionMode =
    flags["permission-mode"] ?? settings.permissions.defaultMode ?? "default";
  const rules = mergeRules(settings, { allow: flags["allowed-tools"], deny: flags["disallowed-tools"] });
  const tools = selectTools(rules.deny);
  const permissions = createHeadlessPermissions({ mode: permissionMode, rules, tools, cwd });

  const source = await resolveModelSource(context.env, (line) => context.stderr.write(`${line}\n`));
  const started = Date.now();
  try {
    const session = await startRunSession({
      endpoint: source.endpoint,
      cwd,
      sessionsDir: sessions,
      prompt,
      model,
      fallbackModels: flags["fallback-model"] ?? [],
      modelOverrides: source.modelOverrides,
      permissionMode,
      tools,
      permissionRules: rules,
      canUseTool: permissions.canUseTool,
      settings,
      onHookNotice: (line) => context.stderr.write(`${line}\n`),
      signal: context.signal,
      ...(context.env.HOME === undefined ? {} : { home: context.env.HOME }),
      ...(flags["max-turns"] === undefined ? {} : { maxTurns: flags["max-turns"] }),
      ...(flags.budget === undefined ? {} : { tokenBudget: flags.budget }),
      ...(flags["append-system-prompt"] === undefined
        ? {}
        : { appendSystemPrompt: flags["append-system-prompt"] }),
      ...(flags.resume === undefined ? {} : { resumeSessionId: flags.resume }),
    });
    const writer = new StreamJsonWriter({
      sessionId: session.sessionId,
      includePartialMessages: flags["include-partial-messages"] ?? false,
      modelOverrides: source.modelOverrides,
    });
    const emit = (line: StreamJsonLine) => {
      if (format === "stream-json") context.stdout.write(`${JSON.stringify(line)}\n`);
    };
    emit(
      writer.init({
        cwd,
        tools: [...session.toolNames],
        model,
        permissionMode,
        simulated: source.simulated,
      }),
    );
    if (request.kind === "compact") {
      const outcome = await session.compact(request.instructions);
      return reportCompact(outcome, { writer, emit, format, model, started, context });
    }
    let step = await session.events.next();
    while (!step.done) {
      for (const line of writer.lines(step.value)) {
        emit(line);
        if (format === "text" && flags.verbose) describeVerbose(line, context);
      }
      step = await session.events.next();
    }
    const terminal: Terminal = step.value;
    const result = writer.result(terminal, {
      durationMs: Date.now() - started,
      permissionDenials: permissions.denials(),
    });
    if (format === "stream-json") emit(result);
    else if (format === "json") context.stdout.write(`${JSON.stringify(result)}\n`);
    else if (terminal.reason === "completed") context.stdout.write(`${result.result}\n`);
    else
      context.stderr.write(
        `forkloop run: ${terminal.reason}${terminal.error ? `: ${terminal.error.message}` : ""}\n`,
      );
    if (format === "text" && flags.verbose) {
      context.stderr.write(
        `session ${session.sessionId} · ${plural(terminal.turnCount, "turn")} · $${result.total_cost_usd.toFixed(4)}\n`,
      );
    }
    return exitCodeForTerminal(terminal.reason);
  } finally {
    await source.close();
  }
}

/** `/compact`: the boundary line and a result (stream-json), one result object (json) or one line (text). */
function reportCompact(
  outcome: SessionCompactResult,
  run: {
    writer: StreamJsonWriter;
    emit: (line: StreamJsonLine) => void;
    format: "text" | "json" | "stream-json";
    model: string;
    started: number;
    context: CommandContext;
  },
): ExitCode {
  const text = outcome.ok
    ? `Compacted: ${outcome.preTokens} → ${outcome.postTokens} tokens`
    : `/compact failed: ${outcome.error}`;
  if (outcome.ok) for (const line of run.writer.lines(outcome.boundary)) run.emit(line);
  const result = run.writer.compactResult(
    { ok: outcome.ok, text, usage: outcome.usage, costUsd: outcome.costUsd },
    { durationMs: Date.now() - run.started, model: run.model },
  );
  if (run.format === "stream-json") run.emit(result);
  else if (run.format === "json") run.context.stdout.write(`${JSON.stringify(result)}\n`);
  else if (outcome.ok) run.context.stdout.write(`${text}\n`);
  if (outcome.ok) return EXIT.ok;
  if (run.format === "text") run.context.stderr.write(`forkloop run: ${text}\n`);
  return EXIT.compactFailed;
}

function describeVerbose(line: StreamJsonLine, context: CommandContext): void {
  if (line.type === "assistant") {
    const block = line.message.content[0] as { type: string; name?: string; input?: unknown } | undefined;
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
