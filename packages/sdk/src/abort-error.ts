/**
 * The Agent SDK's `AbortError`: a query whose `abortController` aborted throws it once its
 * messages are out (forkloop still yields the interrupted turn's `result` first, so what the
 * turn had done is reported). `close()` and `break` end a query without it. Its `name` is
 * "Error", as the Agent SDK's is: tell it by `instanceof AbortError`.
 */
export class AbortError extends Error {}
