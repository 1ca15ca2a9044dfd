import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  AbortError,
  autoCompactWindowFromEnv,
  checkProjectDir,
  ErrorResultError,
  listSessionsIn,
  type ProjectState,
  parseRunRequest,
  projectState,
  query,
  renameSession,
  type SDKMessage,
  type SDKResultMessage,
  savedSession,
  sessionsDirs,
} from "@forkloop/sdk";
import {
  CLI_AGENT_WORDS,
  type ClaudeFlags,
  claudeFlagOptions,
  expandSlashCommand,
  rateLimitPauseLine,
  textFileFlag,
  verboseLine,
  withMainAgent,
  withoutWrittenAt,
  worktreeBaseFlag,
} from "@forkloop/sdk/internal";
import { FORKLOOP_VERSION } from "@forkloop/sdk/version";
import { openSessionWorktree } from "@forkloop/tools/workspace";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode } from "../exit-codes.js";
import { loopChoicesFromFlags } from "../loop-flags.js";
import { timeoutEnv } from "../model-timeouts.js";
import { debugLog } from "../run-claude-options.js";
import { printOutcome } from "../run-outcome.js";
import { streamJsonPrompt, textPrompt } from "../run-prompt.js";
import { reportHint, writeSessionHtml } from "./report.js";
import { parseRunFlags, RUN_USAGE, type RunFlags } from "./run-flags.js";

export { RUN_USAGE };

export async function runCommand(argv: readonly string[], context: CommandContext): Promise<ExitCode> {
  const { flags, positionals } = parseRunFlags(argv);
  if (flags.help) {
    context.stdout.write(`${RUN_USAGE}\n`);
    return EXIT.ok;
  }
  if (flags.version) {
    context.stdout.write(`${FORKLOOP_VERSION} (forkloop)\n`);
    return EXIT.ok;
  }
  const streamInput = flags["input-format"] === "stream-json" ? streamJsonPrompt(context.stdin) : undefined;
  if (streamInput !== undefined && positionals.length > 0) {
    throw new CliError(
      `--input-format stream-json reads the prompts from stdin, one JSON user message a line; drop the prompt argument ("${positionals.join(" ")}").`,
    );
  }
  const given = streamInput?.messages ?? (await textPrompt(positionals, context.stdin));
  const projectDir = await checkProjectDir(resolve(context.cwd, flags.cwd ?? "."));
  // --worktree [name]: the session works in its own git worktree of the project (R-X1).
  const cwd =
    flags.worktree === undefined
      ? projectDir
      : (
          await openSessionWorktree({
            cwd: projectDir,
            name: flags.worktree,
            base: await worktreeBaseFlag(flags, {
              cwd: context.cwd,
              projectDir,
              home: context.env.HOME,
              trustProject: flags["trust-project"] === true,
            }),
          })
        ).dir;
  // A custom slash command (.claude/commands/<name>.md) becomes its prompt; /compact stays ours.
  const command =
    typeof given === "string"
      ? expandSlashCommand(
          given,
          {
            cwd,
            projectRoot: projectState({ cwd, env: context.env }).projectRoot,
            home: context.env.HOME,
            trustProject: flags["trust-project"] === true,
            disabled: flags["disable-slash-commands"],
            safeMode: flags["safe-mode"],
          },
          (line) => context.stderr.write(line),
        )
      : undefined;
  const prompt = command?.prompt ?? given;
  // `/compact` without a session is refused here, with the CLI's wording, before anything starts.
  // --disable-slash-commands: the prompt goes to the model as written, a leading /name too (R-X3).
  const request =
    typeof prompt === "string" && flags["disable-slash-commands"] !== true
      ? parseRunRequest(prompt)
      : { kind: "turns" as const };
  if (request.kind === "compact" && flags.resume === undefined) {
    throw new CliError(
      `run: /compact compacts a saved session: \`forkloop run --resume <session> "/compact [instructions]"\` (list them with \`forkloop sessions list\`).`,
    );
  }
  // --no-session-persistence: the session lives in a directory removed when the run ends.
  const ephemeral = flags["no-session-persistence"]
    ? await mkdtemp(join(tmpdir(), "forkloop-session-"))
    : undefined;
  const stateDirFlag = ephemeral ?? flags["state-dir"];
  const stateDir = stateDirFlag === undefined ? {} : { stateDir: stateDirFlag };
  const state = projectState({ cwd, env: context.env, ...stateDir });
  // Checked before anything starts, so a typo costs nothing: the session, the extra directories.
  const resume = flags.continue ? await latestSession(state, context) : flags.resume;
  if (flags.repair && resume === undefined) {
    throw new CliError("--repair only applies to --resume SESSION (it repairs that session's transcript).");
  }
  // A session that does not exist is named before anything starts; query() repairs it (--repair)
  // under the lock it runs under, so no other process can take it in between (R-R5).
  if (resume !== undefined) savedSession(state, resume);
  // Claude Code suggests a next prompt after each turn but a session's first, so a one-shot run
  // prints none either way; a run with more turns would get suggestions, which forkloop does not make.
  if (flags["prompt-suggestions"] === true && (streamInput !== undefined || resume !== undefined)) {
    throw new CliError(
      "--prompt-suggestions: forkloop makes no prompt suggestions, and Claude Code makes one after every turn but a session's first; with --input-format stream-json, --resume or --continue, leave the flag out (or give false).",
    );
  }
  await Promise.all(
    (flags["add-dir"] ?? []).map((dir) => checkProjectDir(resolve(context.cwd, dir), "--add-dir")),
  );
  const format = flags["output-format"] ?? "text";
  const loop = loopChoicesFromFlags(flags, context.env);
  const abortController = new AbortController();
  // argv → options → query() → printing: everything else is the SDK's, as `claude -p` is the engine's.
  // --agent goes through query()'s own resolver (withMainAgent), in the CLI's words, before the run.
  const options = await withMainAgent(
    {
      cwd,
      // The deadline flags travel as the variables the model endpoint reads (R-R2).
      env: { ...context.env, ...timeoutEnv(flags) },
      stderr: (line) => context.stderr.write(line),
      abortController,
      // The CLI reads every settings file, as Claude Code's -p does, unless --setting-sources narrows it.
      settingSources: ["user", "project", "local"],
      // `--permission-mode bypassPermissions` on the command line is the explicit second switch.
      allowDangerouslySkipPermissions: true,
      ...(flags.betas === undefined ? {} : { betas: flags.betas }),
      // The flags `claude -p` shares with extraArgs, through the one mapping; a custom command's
      // model and tools where the flags give none.
      ...claudeFlagOptions(
        {
          ...flags,
          ...modelFlag(flags.model ?? command?.model),
          ...(command?.allowedTools?.length
            ? { "allowed-tools": [...(flags["allowed-tools"] ?? []), ...command.allowedTools] }
            : {}),
          ...systemPromptFlags(flags, context.cwd),
        },
        { cwd: context.cwd, outputFormat: format },
      ),
      ...(flags.agent === undefined ? {} : { agent: flags.agent }),
      ...(flags.budget === undefined ? {} : { tokenBudget: flags.budget }),
      // R-V2: the first sub-agent's thread loads while the first request is made, not after it.
      ...(context.oneShotProcess === true ? { warmForkThread: true } : {}),
      ...loop,
      ...(resume === undefined ? {} : { resume, ...(flags.repair ? { repair: true } : {}) }),
      ...(flags["trust-project"] === undefined ? {} : { trustProject: flags["trust-project"] }),
      // The hooks see the command as typed (UserPromptSubmit, UserPromptExpansion), the model its prompt.
      ...(command === undefined ? {} : { promptExpansion: command.expansion }),
      ...(flags.sandbox === undefined ? {} : { sandbox: flags.sandbox }),
      ...(flags["disable-slash-commands"] === true ? { slashCommands: false } : {}),
      ...stateDir,
    },
    (line) => context.stderr.write(`${line}\n`),
    CLI_AGENT_WORDS,
  );
  // R-C7: Claude Code warns of a CLAUDE_CODE_AUTO_COMPACT_WINDOW it reads as 100k or ignores on
  // stderr in a text run, and nowhere in a json or stream-json one (query() applies the window).
  const windowWarning = autoCompactWindowFromEnv(context.env.CLAUDE_CODE_AUTO_COMPACT_WINDOW).warning;
  if (format === "text" && windowWarning !== undefined) context.stderr.write(`${windowWarning}\n`);
  const onInterrupt = () => abortController.abort(context.signal.reason);
  if (context.signal.aborted) onInterrupt();
  else context.signal.addEventListener("abort", onInterrupt, { once: true });
  const run = query({ prompt, options });
  let result: SDKResultMessage | undefined;
  let init: InitMessage | undefined;
  let apiErrorStatus: number | null | undefined;
  const debug = debugLog(flags, context, state.userDir);
  const take = (message: SDKMessage) => {
    if (message.type === "result") result = message;
    if (message.type === "system" && message.subtype === "init") init = message;
    // The API error the run ended on is told by its message (its result's status is the same).
    if (message.type === "assistant")
      apiErrorStatus = message.is_api_error_message ? (message.api_error_status ?? null) : undefined;
    if (format === "stream-json") {
      // -n: Claude Code's stream opens with the session's new title, before init (R-X3).
      if (flags.name !== undefined && message.type === "system" && message.subtype === "init")
        context.stdout.write(`${JSON.stringify(sessionTitleLine(flags.name, message.session_id))}\n`);
      context.stdout.write(`${JSON.stringify(withoutWrittenAt(message))}\n`);
    } else if (format === "text" && flags.verbose) writeLine(context.stderr, verboseLine(message));
    debug?.write(verboseLine(message), message.session_id ?? init?.session_id ?? "session");
    if (format === "text") writeLine(context.stderr, rateLimitPauseLine(message));
  };
  try {
    for await (const message of run) take(message);
  } catch (error) {
    // query() ends a failed or aborted run by throwing, as the Agent SDK does: a failed one after
    // its result, an aborted one (Ctrl+C) with what it did not yield after the abort — the turn's
    // tool results, notice and result, printed and reported as any run's (R-L16, R-K2).
    const interrupted = error instanceof AbortError && abortController.signal.aborted;
    if (interrupted) for (const message of error.messagesAfterAbort) take(message);
    const reported = error instanceof ErrorResultError && result !== undefined;
    if (!reported && !interrupted) throw error;
  } finally {
    context.signal.removeEventListener("abort", onInterrupt);
    await debug?.close();
    if (ephemeral !== undefined) await rm(ephemeral, { recursive: true, force: true });
  }
  const inputProblem = streamInput?.problem();
  if (inputProblem !== undefined) context.stderr.write(`forkloop run: ${inputProblem}\n`);
  if (result === undefined) {
    if (inputProblem !== undefined) return EXIT.usage;
    if (context.signal.aborted) {
      // Stopped before the session started (settings, MCP servers): nothing ran, nothing to save.
      context.stderr.write("Interrupted before the session started.\n");
      return EXIT.interrupted;
    }
    throw new Error("the query ended without a result message");
  }
  const code = printOutcome(
    result,
    {
      format,
      verbose: flags.verbose === true,
      compact: request.kind === "compact",
      maxTurns: flags["max-turns"],
      maxBudgetUsd: flags["max-budget-usd"],
      ...(apiErrorStatus === undefined ? {} : { apiErrorStatus }),
      resumeCommand: `forkloop run --resume ${result.session_id}${flags.cwd ? ` --cwd ${flags.cwd}` : ""}`,
      endpoint: {
        url: init?.simulated
          ? "the built-in simulator"
          : (context.env.ANTHROPIC_BASE_URL ?? "https://api.anthropic.com"),
        model: init?.model ?? flags.model ?? "the default model",
      },
    },
    context,
  );
  if (flags.name !== undefined && ephemeral === undefined) {
    await nameSession(result.session_id, flags.name, state, context);
  }
  if (ephemeral === undefined) {
    await announceReport(result.session_id, { state, flags, write: flags.report ?? false }, context);
  }
  return inputProblem === undefined ? code : EXIT.usage;
}

/**
 * R-V1: the end of a run says how to see it — the report's path with `--report`, else the
 * command that writes and opens it. A report that cannot be written is a notice, not a failure.
 */
async function announceReport(
  sessionId: string,
  options: { state: ProjectState; flags: Parameters<typeof reportHint>[1]; write: boolean },
  context: CommandContext,
): Promise<void> {
  if (!options.write) {
    context.stderr.write(`report: ${reportHint(sessionId, options.flags)}\n`);
    return;
  }
  try {
    const transcript = savedSession(options.state, sessionId).path;
    context.stderr.write(`report: ${await writeSessionHtml(transcript, options.state)}\n`);
  } catch (error) {
    context.stderr.write(`forkloop run: the report could not be written: ${(error as Error).message}\n`);
  }
}

type InitMessage = Extract<SDKMessage, { subtype: "init" }>;

/** The stream-json line Claude Code prints when `-n` names the session. */
function sessionTitleLine(title: string, sessionId: string): Record<string, unknown> {
  return {
    type: "system",
    subtype: "session_title_changed",
    title,
    uuid: randomUUID(),
    session_id: sessionId,
  };
}

function writeLine(stream: CommandContext["stderr"], line: string | undefined): void {
  if (line !== undefined) stream.write(`${line}\n`);
}

/** `--system-prompt(-file)` and `--append-system-prompt(-file)` as text. */
function systemPromptFlags(
  flags: RunFlags,
  cwd: string,
): Pick<ClaudeFlags, "system-prompt" | "append-system-prompt"> {
  const appendFile = flags["append-system-prompt-file"];
  const replacementFile = flags["system-prompt-file"];
  const append =
    appendFile === undefined
      ? flags["append-system-prompt"]
      : textFileFlag("--append-system-prompt-file", appendFile, cwd);
  const replacement =
    replacementFile === undefined
      ? flags["system-prompt"]
      : textFileFlag("--system-prompt-file", replacementFile, cwd);
  return {
    ...(replacement === undefined ? {} : { "system-prompt": replacement }),
    ...(append === undefined ? {} : { "append-system-prompt": append }),
  };
}

/** The model: --model, else a custom command's (else --agent's, else the default). */
function modelFlag(model: string | undefined): { model?: string } {
  return model === undefined ? {} : { model };
}

/**
 * `--continue`: the project's most recent session; with none, a new session starts, as in Claude
 * Code (R-X1) — one stderr line says so and where it looked, in case --cwd or --state-dir is off.
 */
async function latestSession(state: ProjectState, context: CommandContext): Promise<string | undefined> {
  const [latest] = await listSessionsIn(state);
  if (latest === undefined) {
    context.stderr.write(
      `forkloop run: --continue: no session to continue in ${sessionsDirs(state).join(" or ")}; starting a new one (check --cwd or --state-dir if you meant another project).\n`,
    );
  }
  return latest?.sessionId;
}

/** `-n NAME`: the session's title (kept beside the transcript); one that cannot be kept is a notice. */
async function nameSession(sessionId: string, name: string, state: ProjectState, context: CommandContext) {
  try {
    await renameSession(sessionId, name, { dir: state.projectRoot, stateDir: state.dir });
  } catch (error) {
    context.stderr.write(`forkloop run: the session could not be named: ${(error as Error).message}\n`);
  }
}
