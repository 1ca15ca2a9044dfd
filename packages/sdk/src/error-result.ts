import { ForkloopError } from "@forkloop/loop-core/errors";
import type { SDKMessage } from "./messages.js";

/**
 * How a query ends after a failure, as the Agent SDK ends it: the iterator yields the error
 * result, then throws — an `Error` whose message carries the result's text (a program's
 * `for await` exits through its `catch`, a one-shot script exits 1). The error keeps the result.
 * forkloop's CLI catches it: it reports the result itself (`forkloop run`'s exit codes).
 * The message is the Agent SDK's word for word: programs written for it match on it (R-K2).
 * In forkloop's family (R-A7) its code is `error_result`, with the result's subtype as data.
 */
export class ErrorResultError extends ForkloopError {
  /** The Agent SDK throws a plain `Error`: programs that print `error.name` see "Error" from both. */
  override readonly name = "Error";
  constructor(
    readonly resultText: string,
    readonly result: Extract<SDKMessage, { type: "result" }>,
  ) {
    super(`Claude Code returned an error result: ${resultText}`, {
      code: "error_result",
      data: { subtype: result.subtype },
    });
  }
}

/** The error a query ends with when `message` is its last: an error result's, else none. */
export function errorAfter(message: SDKMessage): ErrorResultError | undefined {
  const text = errorResultText(message);
  return text === undefined || message.type !== "result" ? undefined : new ErrorResultError(text, message);
}

/**
 * The text an error ends the query with, when `message` is a result that is an error: a
 * success with `is_error` (an API error, a reply cut at max_tokens) says it in `result`, the
 * error subtypes in `errors`. Undefined for anything else.
 */
function errorResultText(message: SDKMessage): string | undefined {
  if (message.type !== "result" || !message.is_error) return undefined;
  const text =
    message.subtype === "success"
      ? message.result
      : message.errors
          .map((error) => error.trim())
          .filter(Boolean)
          .join("; ");
  return text === "" ? undefined : text;
}
