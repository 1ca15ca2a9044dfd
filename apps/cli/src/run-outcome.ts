import { plural } from "@forkloop/batch";
import { isWrongEndpointMessage, type TerminalReason } from "@forkloop/loop-core";
import type { SDKResultMessage } from "@forkloop/sdk";
import type { CommandContext } from "./command-context.js";
import { EXIT, type ExitCode, exitCodeForTerminal } from "./exit-codes.js";

export interface RunOutcomeOptions {
  readonly format: "text" | "json" | "stream-json";
  readonly verbose: boolean;
  /** The run was `/compact`: no model turn, its own exit code. */
  readonly compact: boolean;
  readonly maxTurns: number | undefined;
  readonly maxBudgetUsd: number | undefined;
  /** How the user would continue this session (`forkloop run --resume … --cwd …`). */
  readonly resumeCommand: string;
}

/** The result as the chosen format prints it, and the exit code its terminal reason maps to. */
export function printOutcome(
  result: SDKResultMessage,
  options: RunOutcomeOptions,
  context: CommandContext,
): ExitCode {
  if (options.format === "json") context.stdout.write(`${JSON.stringify(result)}\n`);
  if (options.compact) {
    if (options.format === "text") {
      if (!result.is_error) context.stdout.write(`${result.result}\n`);
      else context.stderr.write(`forkloop run: ${result.result}\n`);
    }
    return result.is_error ? EXIT.compactFailed : EXIT.ok;
  }
  if (options.format === "text") {
    if (!result.is_error) context.stdout.write(`${result.result}\n`);
    else context.stderr.write(`${errorSentence(result, options)}\n`);
    if (options.verbose) {
      context.stderr.write(
        `session ${result.session_id} · ${plural(result.num_turns, "turn")} · $${result.total_cost_usd.toFixed(4)}\n`,
      );
    }
  }
  if (result.subtype === "error_max_budget_usd") return EXIT.budgetReached;
  return exitCodeForTerminal(result.terminal_reason as TerminalReason);
}

/**
 * Claude Code's text-mode error sentences (`Error: Reached max turns (1)`), each followed by the
 * fix — never a bare reason code (issue 13).
 */
export function errorSentence(result: SDKResultMessage, options: RunOutcomeOptions): string {
  const resume = `\`${options.resumeCommand} "…"\``;
  if (result.subtype === "error_max_budget_usd") {
    return `Error: Exceeded USD budget (${options.maxBudgetUsd ?? "?"}). The session is saved: continue it with ${resume} and a higher --max-budget-usd.`;
  }
  const reason = result.terminal_reason as TerminalReason;
  switch (reason) {
    case "max_turns":
      return `Error: Reached max turns (${options.maxTurns ?? result.num_turns}). The session is saved: continue it with ${resume}, or raise --max-turns.`;
    case "model_error":
    case "image_error":
      return `API Error: ${result.result}${apiErrorFix(result.api_error_status, result.result)}`;
    case "hook_stopped":
    case "stop_hook_prevented":
      return `Error: A hook stopped the run: ${result.result}. Check the hooks in your settings files (.claude/settings.json, ~/.claude/settings.json).`;
    case "prompt_too_long":
    case "blocking_limit":
      return `Error: Prompt is too long for the model's context window (${result.result}). Compact the session with \`${options.resumeCommand} "/compact"\`, or choose a model with a larger window (--model).`;
    case "aborted_streaming":
    case "aborted_tools":
      return `Interrupted. The session is saved: continue it with ${resume}.`;
    case "completed":
      return result.result;
    default: {
      const unreachable: never = reason;
      return `Error: ${String(unreachable)}: ${result.result}`;
    }
  }
}

/** What to fix for a failed API call, by its HTTP status (and whether it came from the API at all). */
function apiErrorFix(status: number | null, message: string): string {
  // R-R9: the URL leads somewhere else: a proxy's login page, a web server's 404.
  if (isWrongEndpointMessage(message))
    return " — ANTHROPIC_BASE_URL is not an Anthropic Messages API endpoint: check it (the API's root, e.g. https://api.anthropic.com, without /v1; a proxy may want you to log in first), or unset it.";
  if (status === 401 || status === 403)
    return " — check ANTHROPIC_API_KEY (unset it to use the built-in simulator).";
  if (status === 404) return " — check --model (or the settings' model): the endpoint does not know it.";
  if (status === 429 || status === 529)
    return " — the endpoint stayed busy through every retry; try again later.";
  if (status === null) return " — check ANTHROPIC_BASE_URL and that the endpoint is reachable.";
  return "";
}
