import { access } from "node:fs/promises";
import { resolve } from "node:path";
import { plural } from "@forkloop/batch";
import { loadIntactTranscript, TRANSCRIPT_EXTENSION } from "@forkloop/orchestrator";
import { damageNotice, savedSession } from "@forkloop/sdk";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode } from "../exit-codes.js";
import { parseSessionFlags, sessionFlagsState } from "../session-flags.js";
import { describeMessage } from "../transcript-text.js";

const REPLAY_USAGE = `Usage: forkloop replay <session-id | FILE.fltr> [--cwd DIR] [--state-dir DIR] [--json]

Prints the loop's state transitions of a saved session turn by turn (R-L5): each iteration's
continue reason (next_turn, max_output_tokens_escalate, reactive_compact_retry, …), the messages it
produced, and the terminal reason. A .fltr path replays any transcript, e.g. a batch item's
(<state dir>/batches/<id>/transcripts/<item>-<attempt>.fltr; \`forkloop batch status ID\` names it).
  --cwd DIR   the project whose sessions to read (default: the current directory)
  --state-dir DIR  read the sessions kept there instead
  --json      one JSON object per transition`;

export async function replayCommand(argv: readonly string[], context: CommandContext): Promise<ExitCode> {
  const { flags, positionals } = parseSessionFlags("replay", REPLAY_USAGE, argv);
  if (flags.help) {
    context.stdout.write(`${REPLAY_USAGE}\n`);
    return EXIT.ok;
  }
  const [id, ...extra] = positionals;
  if (id === undefined || extra.length > 0) {
    throw new CliError(`forkloop replay: give exactly one session id.\n\n${REPLAY_USAGE}`);
  }
  const path = id.endsWith(TRANSCRIPT_EXTENSION)
    ? await existingTranscriptFile(resolve(context.cwd, flags.cwd ?? ".", id))
    : savedSession(await sessionFlagsState(flags, context), id).path;
  // R-R4: a damaged transcript replays its intact part, then says where the damage is (exit 2).
  const loaded = await loadIntactTranscript(path);
  const out = (line: string) => context.stdout.write(`${line}\n`);
  if (!flags.json) {
    out(`session ${id} · model ${loaded.start?.model ?? "?"} · ${loaded.start?.querySource ?? ""}`);
  }
  let transitions = 0;
  for (const record of loaded.records) {
    switch (record.type) {
      case "transition":
        transitions++;
        if (flags.json)
          out(
            JSON.stringify({
              type: "transition",
              turn: record.turnCount,
              transition: record.transition ?? null,
              messageCount: record.messageCount,
            }),
          );
        else
          out(
            `turn ${record.turnCount} ← ${record.transition ?? "start"} (${plural(record.messageCount, "message")} in history)`,
          );
        break;
      case "message":
        if (!flags.json) out(describeMessage(record.message));
        break;
      case "history":
        if (!flags.json)
          out(`  [history replaced: ${plural(record.messages.length, "message")} after compaction]`);
        break;
      case "sub_agent":
        if (!flags.json) out(`  [sub-agent ${record.agentId} (${record.querySource})]`);
        break;
      case "terminal":
        if (flags.json)
          out(
            JSON.stringify({
              type: "terminal",
              reason: record.reason,
              turns: record.turnCount,
              usage: record.usage,
              costUsd: record.costUsd,
            }),
          );
        else
          out(
            `terminal: ${record.reason} after ${plural(record.turnCount, "turn")} · $${record.costUsd.toFixed(4)}`,
          );
        break;
      case "session_start":
      case "cache_safe_params":
      case "request_prefix":
      case "fork_point":
      // Timing records are for `forkloop report` (R-V1).
      case "request":
      case "tool_started":
      case "rate_limited":
        break;
      default: {
        const unreachable: never = record;
        throw new Error(`unknown transcript record ${JSON.stringify(unreachable)}`);
      }
    }
  }
  if (transitions === 0 && !flags.json && !loaded.damage) {
    out("(this transcript has no transition records; it was written before transitions were recorded)");
  }
  if (loaded.damage) {
    context.stderr.write(`forkloop: ${damageNotice(loaded.damage)}\n`);
    return EXIT.usage;
  }
  return EXIT.ok;
}

async function existingTranscriptFile(path: string): Promise<string> {
  try {
    await access(path);
  } catch {
    throw new CliError(
      `no transcript file ${path}; give a session id or the path of an existing ${TRANSCRIPT_EXTENSION} file.`,
    );
  }
  return path;
}
