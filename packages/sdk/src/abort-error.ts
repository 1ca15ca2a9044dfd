import type { SDKMessage } from "./messages.js";

/**
 * The Agent SDK's `AbortError`: a query whose `abortController` aborted throws it at the next
 * message, yielding nothing after the abort, as the Agent SDK does. Its `name` is "Error", as the
 * Agent SDK's is: tell it by `instanceof AbortError`. `close()` and `break` end a query without it.
 */
export class AbortError extends Error {
  /**
   * forkloop: what the aborted query had to say after the abort and did not yield — the turn's
   * tool results, its interrupt notice and its result (what `forkloop run` reports a Ctrl+C with).
   */
  messagesAfterAbort: readonly SDKMessage[] = [];
}
