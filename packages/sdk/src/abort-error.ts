import { ForkloopError } from "@forkloop/loop-core/errors";
import type { SDKMessage } from "./messages.js";

/**
 * The Agent SDK's `AbortError`: a query whose `abortController` aborted throws it at the next
 * message, yielding nothing after the abort, as the Agent SDK does. Its `name` is "Error", as the
 * Agent SDK's is (an `Error` subclass with no name of its own): tell it by `instanceof AbortError`.
 * `close()` and `break` end a query without it. In forkloop's family its code is `aborted` (R-A7).
 */
export class AbortError extends ForkloopError {
  override readonly name = "Error";
  /**
   * forkloop: what the aborted query had to say after the abort and did not yield — the turn's
   * tool results, its interrupt notice and its result (what `forkloop run` reports a Ctrl+C with).
   */
  messagesAfterAbort: readonly SDKMessage[] = [];

  /** As the Agent SDK's (Error's own signature): a message, optionally a cause. */
  constructor(message = "", options?: ErrorOptions) {
    super(message, { code: "aborted", cause: options?.cause });
  }
}
