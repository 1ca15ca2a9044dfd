import { plural } from "@forkloop/batch";
import type { SDKResultMessage } from "@forkloop/sdk";
import {
  errorSentence,
  jsonResult,
  limitStop,
  loopReason,
  type RunResultContext,
  resultText,
  runEndpointFailure,
} from "@forkloop/sdk/internal";
import type { CommandContext } from "./command-context.js";
import { EXIT, type ExitCode, exitCodeForTerminal } from "./exit-codes.js";

export interface RunOutcomeOptions extends RunResultContext {
  readonly format: "text" | "json" | "stream-json";
  readonly verbose: boolean;
  /** The run was `/compact`: no model turn, its own exit code. */
  readonly compact: boolean;
}

/** The result as the chosen format prints it, and the exit code its terminal reason maps to. */
export function printOutcome(
  result: SDKResultMessage,
  options: RunOutcomeOptions,
  context: CommandContext,
): ExitCode {
  if (options.format === "json") context.stdout.write(`${JSON.stringify(jsonResult(result))}\n`);
  // R-X1: /compact's result — a failed compaction's included — is printed as is, exit 0 (Claude Code's).
  if (options.compact) {
    if (options.format === "text") context.stdout.write(`${resultText(result)}\n`);
    return EXIT.ok;
  }
  // R-R9: a wrong key, URL or model is bad input (exit 2): one line with the fix, whatever the format.
  const endpointFailure = runEndpointFailure(result, options.endpoint, options.apiErrorStatus ?? null);
  if (endpointFailure !== undefined) {
    context.stderr.write(
      `API Error: ${endpointFailure.sentence}; then continue the session with \`${options.resumeCommand} "…"${endpointFailure.resumeWith}\`.\n`,
    );
  } else if (options.format === "text") {
    const stop = limitStop(result, options);
    if (!result.is_error) context.stdout.write(`${resultText(result)}\n`);
    else if (stop !== undefined) {
      // Claude Code's line on stdout, where scripts read it; how to continue on stderr.
      context.stdout.write(`${stop.said}\n`);
      context.stderr.write(`${stop.fix}\n`);
    } else context.stderr.write(`${errorSentence(result, options)}\n`);
  }
  if (options.format === "text") {
    if (options.verbose) {
      context.stderr.write(
        `session ${result.session_id} · ${plural(result.num_turns, "turn")} · $${result.total_cost_usd.toFixed(4)}\n`,
      );
    }
  }
  if (result.subtype === "error_max_budget_usd") return EXIT.budgetReached;
  if (endpointFailure !== undefined) return EXIT.usage;
  return exitCodeForTerminal(loopReason(result));
}
