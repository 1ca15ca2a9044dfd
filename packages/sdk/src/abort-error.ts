/**
 * The Agent SDK's `AbortError`, exported so programs that catch it compile unchanged. forkloop
 * does not throw it: an aborted query (its `abortController`, `close()`) ends with its `result`
 * message (`error_during_execution`) instead, so what the turn had done is still reported.
 */
export class AbortError extends Error {
  override readonly name = "AbortError";
}
