import { isAbsolute, join, resolve } from "node:path";
import {
  type BatchSpec,
  batchDir,
  buildReport,
  createBatch,
  enqueueOnce,
  finalSnapshot,
  formatDuration,
  formatTotals,
  type ItemSource,
  JOURNAL_FILE,
  LogWriteError,
  loadBatch,
  loadItems,
  newBatchId,
  type OpenedJournal,
  openLocalJournalBackend,
  ProgressDisplay,
  plural,
  runBatch,
  writeReport,
} from "@forkloop/batch";
import type { SubAgentBashOptions } from "@forkloop/orchestrator";
import {
  batchesDir,
  DEFAULT_MODEL,
  loadRunSettings,
  mergeRules,
  resolveMcpServers,
  resolveModelSource,
  resolveSandbox,
  type SessionMcp,
  startSessionMcp,
  withSettingsRetryEnv,
} from "@forkloop/sdk";
import { SETTING_SOURCES } from "@forkloop/tools";
import { z } from "zod";
import { modeSchema, toolListSchema } from "../agent-options.js";
import { createBatchExecutor, createBatchPool } from "../batch-agents.js";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode, exitCodeForBatch } from "../exit-codes.js";
import { parseCommand } from "../flags.js";
import { secondsFlag, TIMEOUT_FLAG_OPTIONS, TIMEOUT_FLAGS_USAGE, timeoutEnv } from "../model-timeouts.js";
import { sandboxFlagSchema } from "../sandbox-flag.js";
import { checkWritableDir, JOURNAL_BYTES_PER_ITEM, REPORT_BYTES_PER_ITEM } from "../state-checks.js";
import { capitalize, errnoFix, errnoReason } from "../state-errors.js";
import { queuedBatchCommand } from "./batch-queue.js";
import { reportHint, writeBatchHtml } from "./report.js";

export const BATCH_USAGE = `Usage: forkloop batch (--files GLOB | --items FILE.jsonl) --prompt TEMPLATE [flags]
       forkloop batch --resume ID [--retry-failed] [--repair] [--concurrency N]
       forkloop batch (--files GLOB | --items FILE.jsonl) --prompt TEMPLATE --queue URL [--attempts N]
       forkloop batch --resume ID --queue URL

Runs one sub-agent per item in a worker pool. Items share one cache-safe prompt prefix, and the
first item warms the prompt cache before the rest start. Progress goes to stderr; results
(results.jsonl, report.json, report.md) to the batch's output directory and a summary to stdout.

  --files GLOB          one item per matching file (relative to --cwd; .gitignore respected)
  --items FILE          one item per line of a JSONL file
  --prompt TEMPLATE     the prompt; {{file}} (with --files) or {{item}} / {{item.key}} (with --items)
  --concurrency N       items running at once (default 8, at most 256)
  --resume ID           continue an interrupted batch: finished items are skipped, interrupted ones redone
  --retry-failed        with --resume: run the failed items again too
  --repair              with --resume: a damaged journal keeps every readable record (the damaged
                        file is moved aside); items it no longer knows are listed again and run
  --id ID               name a new batch (default: b-<date>-<random>)
  --model NAME          model id or alias (default ${DEFAULT_MODEL})
  --fallback-model NAME model to switch to when the primary stays overloaded (repeatable)
  --max-turns N         turns per item (default 8)
  --allowed-tools LIST  allow rules, comma-separated: Edit, Bash(npm test:*), Write(src/**) …
  --disallowed-tools LIST  deny rules; a bare tool name also removes the tool (e.g. Bash, mcp__db)
  --mcp-config FILE     MCP servers from a file (or JSON) {"mcpServers": {…}} (repeatable); with
                        .mcp.json (trusted projects) and settings' mcpServers, started once for all items
  --strict-mcp-config   only the --mcp-config servers
  --trust-project          use this project's own settings as they are (see forkloop trust)
  --sandbox MODE        each item's Bash in bubblewrap: auto | on | off (default auto: sandboxed
                        when bubblewrap works here, said once on stderr when it does not)
  --permission-mode M   default | acceptEdits | plan | bypassPermissions | dontAsk | auto (default
                        dontAsk: reads run, anything that would ask for permission is denied)
  --append-system-prompt TEXT  added to the shared system prompt
  --output DIR          where results.jsonl and the report go (default .forkloop/batches/<id>/)
  --cwd DIR             the project to work in (default: the current directory)
  --no-warm             start the whole first wave at once (no cache warming; for comparisons)
  --queue URL           distribute the batch over Redis (redis://HOST:PORT[/DB]): \`forkloop worker
                        --queue URL\` processes on any host run the items; this one shows progress
                        and writes the results (see the @forkloop/batch README for Redis settings)
  --attempts N          with --queue: runs per item before it counts as failed (default 3)
  --retry-delay MS      with --queue: the first retry's delay, doubled per attempt (default 1000)
  --report              also write the HTML report (report.html) and print its path; without it
                        the command that writes and opens it is printed
${TIMEOUT_FLAGS_USAGE}

State: <cwd>/.forkloop/batches/<id>/ (batch.json, journal.log). Exit codes: 0 every item
succeeded, 6 some failed, 7 none succeeded, 130 interrupted (resume it), 2 bad flags.`;

const count = (flag: string, example: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `must be a whole number, e.g. --${flag} ${example}`)
    .transform(Number)
    .refine((value) => value >= 1 && value <= max, `must be between 1 and ${max}`);

const schema = z.object({
  help: z.boolean().optional(),
  files: z.string().min(1, 'give a glob, e.g. --files "src/**/*.ts"').optional(),
  items: z.string().min(1, "give a JSONL file, e.g. --items tasks.jsonl").optional(),
  prompt: z.string().min(1, 'give a prompt, e.g. --prompt "Summarize {{file}}"').optional(),
  concurrency: count("concurrency", 8, 256).optional(),
  resume: z.string().min(1).optional(),
  id: z.string().min(1).optional(),
  model: z.string().min(1, "give a model id, e.g. --model claude-sonnet-4-6").optional(),
  "fallback-model": z.array(z.string().min(1)).optional(),
  "max-turns": count("max-turns", 8, 1000).optional(),
  "allowed-tools": toolListSchema.optional(),
  "disallowed-tools": toolListSchema.optional(),
  "mcp-config": z.array(z.string().min(1, "give a file, e.g. --mcp-config mcp.json")).optional(),
  "strict-mcp-config": z.boolean().optional(),
  "trust-project": z.boolean().optional(),
  sandbox: sandboxFlagSchema.optional(),
  "permission-mode": modeSchema.optional(),
  "append-system-prompt": z.string().optional(),
  output: z.string().min(1).optional(),
  cwd: z.string().min(1).optional(),
  "no-warm": z.boolean().optional(),
  "retry-failed": z.boolean().optional(),
  report: z.boolean().optional(),
  repair: z.boolean().optional(),
  queue: z.string().min(1, "give a Redis URL, e.g. --queue redis://127.0.0.1:6379").optional(),
  attempts: count("attempts", 3, 100).optional(),
  "retry-delay": z
    .string()
    .regex(/^\d+$/, "must be milliseconds, e.g. --retry-delay 1000")
    .transform(Number)
    .optional(),
  "headers-timeout": secondsFlag("headers-timeout", 120).optional(),
  "idle-timeout": secondsFlag("idle-timeout", 90).optional(),
});
type BatchFlags = z.infer<typeof schema>;

export async function batchCommand(argv: readonly string[], context: CommandContext): Promise<ExitCode> {
  const { flags, positionals } = parseCommand(
    {
      command: "batch",
      usage: BATCH_USAGE,
      schema,
      options: {
        help: { type: "boolean", short: "h" },
        files: { type: "string" },
        items: { type: "string" },
        prompt: { type: "string" },
        concurrency: { type: "string" },
        resume: { type: "string" },
        id: { type: "string" },
        model: { type: "string" },
        "fallback-model": { type: "string", multiple: true },
        "max-turns": { type: "string" },
        "allowed-tools": { type: "string" },
        "disallowed-tools": { type: "string" },
        "mcp-config": { type: "string", multiple: true },
        "strict-mcp-config": { type: "boolean" },
        "trust-project": { type: "boolean" },
        sandbox: { type: "string" },
        "permission-mode": { type: "string" },
        "append-system-prompt": { type: "string" },
        output: { type: "string" },
        cwd: { type: "string" },
        "no-warm": { type: "boolean" },
        "retry-failed": { type: "boolean" },
        report: { type: "boolean" },
        repair: { type: "boolean" },
        queue: { type: "string" },
        attempts: { type: "string" },
        "retry-delay": { type: "string" },
        ...TIMEOUT_FLAG_OPTIONS,
      },
    },
    argv,
  );
  if (flags.help) {
    context.stdout.write(`${BATCH_USAGE}\n`);
    return EXIT.ok;
  }
  if (positionals.length > 0) {
    throw new CliError(
      `forkloop batch takes no arguments (got "${positionals.join(" ")}"); put the prompt in --prompt.\n\n${BATCH_USAGE}`,
    );
  }
  const cwd = resolve(context.cwd, flags.cwd ?? ".");
  // Settings first: a bad settings file must fail (exit 2) before any state or server exists.
  const settings = await loadRunSettings(cwd, context.env.HOME, SETTING_SOURCES, {
    trustProject: flags["trust-project"] === true,
    onIgnored: (line) => context.stderr.write(`forkloop: ${line}\n`),
  });
  if (flags.queue !== undefined) {
    if (flags["mcp-config"] !== undefined || flags["strict-mcp-config"] !== undefined) {
      throw new CliError("--mcp-config is not supported with --queue yet: workers do not start MCP servers.");
    }
    return queuedBatchCommand({ ...flags, queue: flags.queue }, cwd, context, () => prepareBatch(flags, cwd));
  }
  if (flags.attempts !== undefined || flags["retry-delay"] !== undefined) {
    throw new CliError(
      "--attempts and --retry-delay apply to --queue batches; a local batch retries with --resume ID --retry-failed.",
    );
  }
  // R-S6: a batch runs unattended, so `auto` (the default) sandboxes every item's Bash when it
  // can; `on` without bubblewrap fails here, before any state exists.
  const bash: SubAgentBashOptions = {
    sandbox: resolveSandbox(flags.sandbox ?? settings.sandbox, {
      mode: flags["permission-mode"] ?? "dontAsk",
      unattended: true,
      path: context.env.PATH,
      notice: (line) => context.stderr.write(`${line}\n`),
    }),
    ...(settings.env === undefined ? {} : { env: settings.env }),
  };
  // Issue 11: deadlines from the flags, over the environment, over the settings' env map.
  const endpointEnv = { ...withSettingsRetryEnv(context.env, settings.env), ...timeoutEnv(flags) };
  // Issue 11: a state directory that cannot be written fails now, naming the reason.
  await checkWritableDir(batchesDir(cwd), {
    role: "state directory",
    fix: "Batches keep their journal in <cwd>/.forkloop/batches/; use another --cwd if it cannot be written.",
  });
  const mcpEnv = { ...context.env, ...settings.env };
  const mcpServers = (mcpConfig: readonly string[] | undefined, strict: boolean | undefined) =>
    resolveMcpServers({
      cwd,
      home: context.env.HOME,
      env: mcpEnv,
      settingSources: SETTING_SOURCES,
      trustProject: flags["trust-project"],
      configFiles: mcpConfig,
      strict,
      onIgnored: (line) => context.stderr.write(`forkloop: ${line}\n`),
    });
  // Issue 15: a bad MCP config, like bad settings, fails before a new batch's state exists.
  const servers =
    flags.resume === undefined
      ? await mcpServers(flags["mcp-config"], flags["strict-mcp-config"])
      : undefined;
  const { spec, dir, items } = await prepareBatch(flags, cwd);
  const rules = mergeRules(settings, { allow: spec.allowedTools, deny: spec.disallowedTools });
  const notice = (line: string) => context.stderr.write(`${line}\n`);
  const backend = await openLocalJournalBackend({
    dir,
    retryFailed: flags["retry-failed"] ?? false,
    repair: flags.repair ?? false,
    batchId: spec.id,
  });
  let mcp: SessionMcp | undefined;
  try {
    // Issue 15: the MCP servers start once, in this process, for every item (calls come over comlink).
    mcp = await startSessionMcp(servers ?? (await mcpServers(spec.mcpConfig, spec.strictMcpConfig)), {
      cwd,
      env: mcpEnv,
      resultsDir: join(dir, "mcp-results"),
      deny: rules.deny,
      warn: notice,
    });
    reportJournalRecovery(backend, join(dir, JOURNAL_FILE), notice);
    await enqueueOnce(backend, dir, spec, items, { repair: flags.repair ?? false, notice });
    await checkBatchDirs(spec, dir, (await backend.list()).length);
    const display = new ProgressDisplay(context.stderr);
    const interruptedBefore = backend.interrupted.length;
    context.stderr.write(
      `forkloop batch ${spec.id}: ${plural((await backend.list()).length, "item")}${
        flags.resume ? ` (resuming; ${plural(interruptedBefore, "interrupted item")} will be redone)` : ""
      } · state in ${dir}\n`,
    );
    const source = await resolveModelSource(endpointEnv, (line) => context.stderr.write(`${line}\n`));
    const concurrency = flags.concurrency ?? 8;
    const pool = createBatchPool(source, concurrency);
    try {
      let pausedUntil = 0;
      const executor = await createBatchExecutor({
        spec,
        cwd,
        settings,
        source,
        pool,
        bash,
        mcpTools: mcp.tools,
        transcriptsDir: join(dir, "transcripts"),
        // Issue 11: which interrupted items may repeat a side effect on resume ("may have run twice").
        recordSideEffect: (claim, tool) => backend.recordSideEffect(claim, tool),
        onNotice: (line) => display.log(line),
        onEvent: (claim, event) => {
          if (event.type === "rate_limited" && event.until > pausedUntil) {
            // The pool itself pauses every worker; this only tells the user why progress stalls.
            pool.pauseUntil(event.until);
            pausedUntil = event.until;
            display.log(
              `rate limited (429 on ${claim.item.label}): pausing all workers for ${formatDuration(event.retryAfterMs)}`,
            );
          }
        },
      });
      const summary = await runBatch({
        backend,
        executor,
        concurrency,
        warm: !flags["no-warm"],
        signal: context.signal,
        pausedForMs: () => Math.max(0, pausedUntil - Date.now()),
        onEvent: (event) => {
          if (event.type === "item_settled") {
            const outcome = event.outcome;
            const result = outcome.ok === "cancelled" ? undefined : outcome.result;
            const status = outcome.ok === true ? "ok    " : "FAILED";
            const detail = outcome.ok === false ? ` ${outcome.error.code}: ${outcome.error.message}` : "";
            display.log(
              `${status} ${event.claim.item.label} (${plural(result?.turns ?? 0, "turn")}, $${(result?.costUsd ?? 0).toFixed(4)})${detail}`,
              event.snapshot,
            );
          } else if (event.type === "progress") {
            display.update(event.snapshot);
          } else {
            display.log(`not recorded: ${event.claim.item.label}: ${event.reason}`);
          }
        },
      });
      const report = buildReport(spec.id, summary.states, summary.wallMs);
      display.finish(finalSnapshot(report));
      const paths = await writeReport(spec.outputDir, report).catch((error: unknown) => {
        throw reportWriteFailed(error, spec);
      });
      if (paths.keptPrevious) {
        notice(
          `forkloop: ${paths.keptPrevious.path} lists ${plural(paths.keptPrevious.finished, "finished item")}, more than the journal now holds (${report.totals.succeeded + report.totals.failed}); it was kept, and this run's results are in ${paths.results}`,
        );
      }
      context.stdout.write(
        `${formatTotals(report)}\nresults: ${paths.results}\nreport:  ${paths.markdown}\nhtml:    ${await htmlReportLine(spec, dir, flags)}\n`,
      );
      if (summary.interrupted) {
        context.stderr.write(
          `interrupted: resume with \`forkloop batch --resume ${spec.id}${flags.cwd ? ` --cwd ${flags.cwd}` : ""}\`\n`,
        );
        return EXIT.interrupted;
      }
      return exitCodeForBatch(report.totals);
    } finally {
      await pool.close();
      await source.close();
    }
  } catch (error) {
    if (error instanceof LogWriteError) throw journalWriteFailed(error, spec.id);
    throw error;
  } finally {
    await backend.close().catch(() => {});
    await mcp?.close();
  }
}

/** Issue 17: report.html's path with `--report`, else the command that writes and opens it. */
async function htmlReportLine(spec: BatchSpec, dir: string, flags: BatchFlags): Promise<string> {
  if (!flags.report) return reportHint(spec.id, flags.cwd);
  try {
    return await writeBatchHtml(spec, dir);
  } catch (error) {
    return `not written (${(error as Error).message}); try ${reportHint(spec.id, flags.cwd)}`;
  }
}

async function prepareBatch(
  flags: BatchFlags,
  cwd: string,
): Promise<{ spec: BatchSpec; dir: string; items?: Awaited<ReturnType<typeof loadItems>> }> {
  if (flags["retry-failed"] && flags.resume === undefined) {
    throw new CliError("--retry-failed only applies to --resume ID (it re-runs that batch's failed items).");
  }
  if (flags.repair && flags.resume === undefined) {
    throw new CliError("--repair only applies to --resume ID (it repairs that batch's journal).");
  }
  if (flags.resume !== undefined) {
    const conflicting = (
      [
        "files",
        "items",
        "prompt",
        "id",
        "model",
        "fallback-model",
        "max-turns",
        "allowed-tools",
        "disallowed-tools",
        "permission-mode",
        "append-system-prompt",
        "output",
        "mcp-config",
        "strict-mcp-config",
      ] as const
    ).filter((flag) => flags[flag] !== undefined);
    if (conflicting.length > 0) {
      throw new CliError(
        `--resume continues batch ${flags.resume} with the settings it started with; drop ${conflicting.map((flag) => `--${flag}`).join(", ")}.`,
      );
    }
    return loadBatch(cwd, flags.resume);
  }
  if ((flags.files === undefined) === (flags.items === undefined)) {
    throw new CliError(
      `give exactly one of --files GLOB or --items FILE.jsonl (or --resume ID).\n\n${BATCH_USAGE}`,
    );
  }
  if (flags.prompt === undefined) {
    throw new CliError(
      `--prompt is required, e.g. --prompt "Summarize {{${flags.files ? "file" : "item"}}}".`,
    );
  }
  const source: ItemSource =
    flags.files !== undefined
      ? { kind: "files", pattern: flags.files, cwd }
      : { kind: "items", path: isAbsolute(flags.items!) ? flags.items! : resolve(cwd, flags.items!) };
  const items = await loadItems(source, flags.prompt);
  const id = flags.id ?? newBatchId();
  const spec: BatchSpec = {
    id,
    createdAt: new Date().toISOString(),
    cwd,
    source:
      source.kind === "files"
        ? { kind: "files", pattern: source.pattern }
        : { kind: "items", path: source.path },
    prompt: flags.prompt,
    model: flags.model ?? DEFAULT_MODEL,
    maxTurns: flags["max-turns"] ?? 8,
    allowedTools: flags["allowed-tools"] ?? [],
    disallowedTools: flags["disallowed-tools"] ?? [],
    permissionMode: flags["permission-mode"] ?? "dontAsk",
    fallbackModels: flags["fallback-model"] ?? [],
    ...(flags["append-system-prompt"] === undefined
      ? {}
      : { appendSystemPrompt: flags["append-system-prompt"] }),
    ...(flags["mcp-config"] === undefined
      ? {}
      : {
          mcpConfig: flags["mcp-config"].map((value) =>
            value.trimStart().startsWith("{") ? value : resolve(cwd, value),
          ),
        }),
    ...(flags["strict-mcp-config"] === undefined ? {} : { strictMcpConfig: flags["strict-mcp-config"] }),
    outputDir: flags.output ? resolve(cwd, flags.output) : batchDir(cwd, id),
  };
  const dir = await createBatch(spec);
  return { spec, dir, items };
}

/** Issue 11: a torn last record is dropped and said once; a repair says what it kept. */
function reportJournalRecovery(journal: OpenedJournal, path: string, notice: (line: string) => void): void {
  if (journal.tornBytes > 0) {
    notice(
      `forkloop: ${path} ended in a torn record (${journal.tornBytes} bytes, an interrupted write); it was dropped`,
    );
  }
  if (journal.repaired) {
    notice(
      `forkloop: repaired ${path}: kept ${plural(journal.repaired.keptRecords, "readable record")}, dropped ${plural(journal.repaired.droppedRecords, "damaged line")}; the damaged file is ${journal.repaired.backupPath}`,
    );
  }
}

/** Issue 11: the journal's and the report's directories, checked before the first request. */
async function checkBatchDirs(spec: BatchSpec, dir: string, items: number): Promise<void> {
  await checkWritableDir(dir, {
    role: "batch state directory",
    neededBytes: items * JOURNAL_BYTES_PER_ITEM,
    fix: "The journal and transcripts go there (<cwd>/.forkloop/batches/<id>/); use another --cwd if it cannot be written.",
  });
  if (spec.outputDir !== dir) {
    await checkWritableDir(spec.outputDir, {
      role: "output directory",
      neededBytes: items * REPORT_BYTES_PER_ITEM,
      fix: "results.jsonl and the report go there: give a writable --output DIR.",
    });
  }
}

/** Issue 11: the journal refused a record (full disk …): what is safe, and how to go on. */
function journalWriteFailed(error: LogWriteError, id: string): CliError {
  return new CliError(
    `cannot write the batch journal ${error.path}: ${errnoReason(error.code)}. Every result recorded before this is safe; the items that were running were stopped and will run again. ${capitalize(errnoFix(error.code))}, then \`forkloop batch --resume ${id}\`.`,
  );
}

function reportWriteFailed(error: unknown, spec: BatchSpec): CliError {
  const code = (error as NodeJS.ErrnoException).code ?? "";
  return new CliError(
    `cannot write the report to ${spec.outputDir}: ${errnoReason(code)}. Every item's result is in the journal; ${errnoFix(code)}, then \`forkloop batch --resume ${spec.id}\` writes the report (finished items do not run again).`,
  );
}

/** A call that may change things: a known tool that does not call itself read-only for this input. */
