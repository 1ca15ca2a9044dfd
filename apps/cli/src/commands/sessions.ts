import { plural } from "@forkloop/batch";
import { loadIntactTranscript } from "@forkloop/orchestrator";
import { damageNotice, listSessionsIn, savedSession, sessionsDirs } from "@forkloop/sdk";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode } from "../exit-codes.js";
import { parseSessionFlags, sessionFlagsState } from "../session-flags.js";
import { describeMessage } from "../transcript-text.js";

const SESSIONS_USAGE = `Usage: forkloop sessions list [--cwd DIR] [--state-dir DIR] [--json]
       forkloop sessions show <session-id> [--cwd DIR] [--state-dir DIR] [--json]

Sessions are the transcripts of \`forkloop run\`, kept per project (the git root, else the
directory) in $FORKLOOP_HOME/projects/<project>/sessions/ (FORKLOOP_HOME defaults to
~/.forkloop); sessions in <cwd>/.forkloop/sessions/ are listed when forkloop made them.
  list    newest first: id, date, model, turns, terminal reason, first prompt
  show    the whole conversation of one session
  --cwd DIR   the project whose sessions to read (default: the current directory)
  --state-dir DIR  read the sessions kept there instead
  --json      machine-readable output`;

export async function sessionsCommand(argv: readonly string[], context: CommandContext): Promise<ExitCode> {
  const { flags, positionals } = parseSessionFlags("sessions", SESSIONS_USAGE, argv);
  if (flags.help) {
    context.stdout.write(`${SESSIONS_USAGE}\n`);
    return EXIT.ok;
  }
  const state = await sessionFlagsState(flags, context);
  const [action, id, ...extra] = positionals;
  if (action === "list" && id === undefined) {
    const sessions = await listSessionsIn(state);
    if (flags.json) {
      for (const session of sessions) context.stdout.write(`${JSON.stringify(session)}\n`);
      return EXIT.ok;
    }
    if (sessions.length === 0) {
      context.stderr.write(
        `no sessions for ${state.projectRoot} yet (looked in ${sessionsDirs(state).join(", ")}); \`forkloop run "<prompt>"\` creates one.\n`,
      );
      return EXIT.ok;
    }
    for (const session of sessions) {
      context.stdout.write(
        `${session.sessionId}  ${session.updatedAt}  ${session.model ?? "?"}  ${plural(session.messageCount, "msg")}  ${session.terminalReason ?? "unfinished"}${session.torn ? " (torn tail dropped)" : ""}${session.damage ? ` (DAMAGED at byte ${session.damage.offset}: \`forkloop run --resume ${session.sessionId} --repair\`)` : ""}  ${JSON.stringify(session.firstPrompt ?? "")}\n`,
      );
    }
    return EXIT.ok;
  }
  if (action === "show" && id !== undefined && extra.length === 0) {
    const { path } = savedSession(state, id);
    const loaded = await loadIntactTranscript(path);
    if (loaded.damage) context.stderr.write(`forkloop: ${damageNotice(loaded.damage)}\n`);
    if (flags.json) {
      context.stdout.write(
        `${JSON.stringify({ start: loaded.start, terminal: loaded.terminal, torn: loaded.torn, messages: loaded.messages })}\n`,
      );
      return loaded.damage ? EXIT.usage : EXIT.ok;
    }
    const start = loaded.start;
    context.stdout.write(
      `session ${id} · model ${start?.model ?? "?"} · cwd ${start?.cwd ?? "?"} · started ${start?.createdAt ?? "?"}\n`,
    );
    for (const message of loaded.messages) context.stdout.write(`${describeMessage(message)}\n`);
    const terminal = loaded.terminal;
    context.stdout.write(
      terminal
        ? `ended: ${terminal.reason} after ${plural(terminal.turnCount, "turn")} · $${terminal.costUsd.toFixed(4)}\n`
        : "not finished (no terminal record): `forkloop run --resume <id>` continues it\n",
    );
    return loaded.damage ? EXIT.usage : EXIT.ok;
  }
  throw new CliError(`forkloop sessions: expected \`list\` or \`show <session-id>\`.\n\n${SESSIONS_USAGE}`);
}
