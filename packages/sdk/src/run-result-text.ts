import { formatWait, isWrongEndpointMessage, type TerminalReason } from "@forkloop/loop-core";
import { describeEndpointFailure, type EndpointContext, type EndpointFailure } from "./endpoint-failure.js";
import type { SDKMessage, SDKResultMessage } from "./messages.js";

/** What a run's sentences name besides its result: its limits, how to continue it, where it ran. */
export interface RunResultContext {
  readonly maxTurns: number | undefined;
  readonly maxBudgetUsd: number | undefined;
  /** How the user would continue this session (`forkloop run --resume … --cwd …`). */
  readonly resumeCommand: string;
  /** Where the requests went and for which model (what an endpoint failure's message names). */
  readonly endpoint: EndpointContext;
  /**
   * The HTTP status of the API error the run ended on (its API-error message says it; null: no
   * response), undefined when it did not end on one.
   */
  readonly apiErrorStatus?: number | null;
}

/**
 * What a result says: a success's text, an error result's errors (as the Agent SDK's, it has no
 * `result`). A turn that ended on an API error is a success with is_error whose text is Claude
 * Code's (`API Error: 400 Invalid request`): the error's own words are kept, as the CLI's
 * sentences say "API Error" and the status their own way.
 */
export function resultText(result: SDKResultMessage): string {
  if (result.subtype !== "success") return result.errors.join("; ");
  if (result.terminal_reason !== "api_error") return result.result;
  const status = result.api_error_status;
  // Claude Code's words for a 403 start "Failed to authenticate. ", a 429's "Request rejected
  // (429) · ", and a server error ends on where to look if it persists (apiErrorText): the CLI's
  // sentences name the status and the fix their own way.
  return result.result
    .replace(/^(Failed to authenticate\. )?API Error: /, "")
    .replace(/^Request rejected \(429\) · /, "")
    .replace(SERVER_ERROR_ADVICE, "")
    .replace(status == null ? "" : `${status} `, "");
}

const SERVER_ERROR_ADVICE = /\. This is a server-side issue, usually temporary — try again in a moment\..*$/s;

/**
 * The loop's terminal reason a result ended on (R-L6), which the exit code follows: the result
 * names a turn that ended on an API error `api_error`, as Claude Code does; the loop's is `model_error`.
 */
export function loopReason(result: SDKResultMessage): TerminalReason {
  return result.terminal_reason === "api_error" ? "model_error" : (result.terminal_reason as TerminalReason);
}

/**
 * A run stopped at its --max-turns or --max-budget-usd: Claude Code's text-mode line, which it
 * prints on stdout (`Error: Reached max turns (1)`), and how to continue the saved session.
 */
export function limitStop(
  result: SDKResultMessage,
  options: RunResultContext,
): { said: string; fix: string } | undefined {
  const resume = `\`${options.resumeCommand} "…"\``;
  if (result.subtype === "error_max_budget_usd") {
    return {
      said: `Error: Exceeded USD budget (${options.maxBudgetUsd ?? "?"})`,
      fix: `The session is saved: continue it with ${resume} and a higher --max-budget-usd.`,
    };
  }
  if (loopReason(result) !== "max_turns") return undefined;
  return {
    said: `Error: Reached max turns (${options.maxTurns ?? result.num_turns})`,
    fix: `The session is saved: continue it with ${resume}, or raise --max-turns.`,
  };
}

/**
 * Claude Code's text-mode error sentences (`Error: Reached max turns (1)`), each followed by the
 * fix — never a bare reason code.
 */
export function errorSentence(result: SDKResultMessage, options: RunResultContext): string {
  const resume = `\`${options.resumeCommand} "…"\``;
  const text = resultText(result);
  const stop = limitStop(result, options);
  if (stop !== undefined) return `${stop.said}. ${stop.fix}`;
  const reason = loopReason(result);
  switch (reason) {
    case "max_turns":
      return `Error: Reached max turns (${options.maxTurns ?? result.num_turns})`;
    case "model_error":
    case "image_error":
      return `API Error: ${text}${apiErrorFix(options.apiErrorStatus ?? null)}`;
    case "hook_stopped":
    case "stop_hook_prevented":
      return `Error: A hook stopped the run: ${text}. Check the hooks in your settings files (.claude/settings.json, ~/.claude/settings.json).`;
    case "prompt_too_long":
    case "blocking_limit":
      return `Error: Prompt is too long for the model's context window (${text}). Compact the session with \`${options.resumeCommand} "/compact"\`, or choose a model with a larger window (--model).`;
    case "aborted_streaming":
    case "aborted_tools":
      return `Interrupted. The session is saved: continue it with ${resume}.`;
    case "completed":
      return text;
    default: {
      const unreachable: never = reason;
      return `Error: ${String(unreachable)}: ${text}`;
    }
  }
}

/**
 * R-R9: a run that ended on a refused key (401, 403), an unknown model (404) or an answer that is
 * not the Messages API's (a proxy's login page): every retry would fail the same way, so it is
 * the user's input to fix, as `batch` stops on it. An unreachable server or a busy API is not.
 */
export function runEndpointFailure(
  result: SDKResultMessage,
  at: EndpointContext,
  status: number | null,
): EndpointFailure | undefined {
  if (loopReason(result) !== "model_error") return undefined;
  // A 404's result is Claude Code's sentence about the model; the R-R9 line names the API's error type.
  const text =
    status === 404 && result.subtype === "success" && result.api_error_type !== undefined
      ? result.api_error_type
      : resultText(result);
  const code = isWrongEndpointMessage(text)
    ? "wrong_endpoint"
    : status === 401 || status === 403 || status === 404
      ? `http_${status}`
      : undefined;
  return code === undefined ? undefined : describeEndpointFailure({ code, message: text }, at);
}

/** What to fix for a failed API call that is not bad input, by its HTTP status. */
function apiErrorFix(status: number | null): string {
  if (status === 429 || status === 529)
    return " — the endpoint stayed busy through every retry; try again later.";
  if (status === null) return " — check ANTHROPIC_BASE_URL and that the endpoint is reachable.";
  return "";
}

/**
 * The result as `--output-format json` prints it: Claude Code leaves out the usage since the
 * previous result there (a json run has one result), which its stream-json keeps.
 */
export function jsonResult(
  result: SDKResultMessage,
): Omit<SDKResultMessage, "model_usage_since_last_result"> {
  const { model_usage_since_last_result: _sinceLast, ...printed } = withoutWrittenAt(result);
  return printed;
}

/**
 * A message as Claude Code prints it: without `written_at`, which the Agent SDK (and forkloop's
 * query()) adds to system and result messages as it hands them to the program.
 */
export function withoutWrittenAt<T extends object>(message: T): T {
  if (!("written_at" in message)) return message;
  const { written_at: _writtenAt, ...printed } = message;
  return printed as T;
}

/**
 * R-R11: a far rate-limit reset (an `api_retry` with `resumes_at`) as one line — what it is and
 * when the run goes on — which `forkloop run` prints verbose or not; undefined for any other message.
 */
export function rateLimitPauseLine(message: SDKMessage): string | undefined {
  if (message.type !== "system" || message.subtype !== "api_retry" || message.resumes_at === undefined)
    return undefined;
  return `rate limited (${message.error_status ?? "error"}: ${message.error_message}): waiting until ${message.resumes_at} (${formatWait(message.retry_delay_ms)}), then the run goes on; --retry-max-wait caps such waits`;
}

/** `--verbose` / `--debug`'s line for a message: the main agent's tool calls, retries, compactions. */
export function verboseLine(message: SDKMessage): string | undefined {
  if (message.type === "assistant" && message.parent_tool_use_id === null) {
    const block = message.message.content[0];
    return block?.type === "tool_use" ? `→ ${block.name} ${JSON.stringify(block.input)}` : undefined;
  }
  if (message.type === "system" && message.subtype === "api_retry" && message.resumes_at === undefined)
    return `retrying (attempt ${message.attempt}/${message.max_retries}) after ${message.retry_delay_ms} ms: ${message.error_message}`;
  if (message.type === "system" && message.subtype === "compact_boundary")
    return `compacted: ${message.compact_metadata.pre_tokens} → ${message.compact_metadata.post_tokens} tokens`;
  return undefined;
}
