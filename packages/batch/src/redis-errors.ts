/**
 * R-R10: Redis's own errors as one line naming the fix, never `unexpected error` with a stack.
 * Redis prefixes its error replies with a code (`OOM`, `READONLY`, `NOAUTH`, …); a connection
 * failure carries Node's errno (`ECONNREFUSED`). Anything else keeps its first line.
 */
export function describeRedisError(
  error: unknown,
  url: string,
  context: { readonly passwordGiven?: boolean } = {},
): string {
  // A transaction refused as a whole (EXECABORT) carries the reason in its commands' errors.
  const previous = (error as { previousErrors?: unknown[] }).previousErrors?.[0];
  if (/^EXECABORT\b/.test((error as Error)?.message ?? "") && previous !== undefined) {
    return describeRedisError(previous, url, context);
  }
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  const first = message.split("\n")[0] ?? message;
  if (/^OOM\b/.test(message)) {
    return `Redis at ${url} is out of memory (used memory > maxmemory) and refuses writes. Raise its maxmemory (redis-cli -u ${url} CONFIG SET maxmemory 2gb, and in redis.conf) or delete the keys of finished batches (forkloop:batch:<id>:*), then run the command again.`;
  }
  if (/^READONLY\b/.test(message)) {
    return `Redis at ${url} is a read-only replica. Give --queue the primary's URL.`;
  }
  if (/^(NOAUTH|WRONGPASS)\b/.test(message) || /invalid (username-)?password/i.test(message)) {
    // ioredis may report a wrong password as HELLO's NOAUTH: what was given decides the words.
    const why =
      context.passwordGiven === true || /^WRONGPASS\b/.test(message)
        ? "WRONGPASS: the password is wrong"
        : "NOAUTH: it needs a password";
    return `Redis at ${url} refused the connection (${why}). Put the password in the URL: redis://:PASSWORD@HOST:PORT (redis://USER:PASSWORD@HOST:PORT for an ACL user).`;
  }
  if (/^(MISCONF)\b/.test(message)) {
    return `Redis at ${url} cannot write its snapshot to disk and refuses writes (${first}). Free disk space on the Redis host or fix its dir setting, then run the command again.`;
  }
  if (code === "ECONNREFUSED" || /ECONNREFUSED/.test(message)) {
    return `cannot reach Redis at ${url} (connection refused). Start it (redis-server, see the @forkloop/batch README) or fix --queue.`;
  }
  return `Redis at ${url}: ${first}`;
}

/** A reply error from Redis (ioredis's `ReplyError`) or a connection error, as opposed to a bug. */
export function isRedisError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === "ReplyError" || error.name === "MaxRetriesPerRequestError") return true;
  return /^(OOM|READONLY|NOAUTH|WRONGPASS|MISCONF|LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|EXECABORT)\b/.test(
    error.message,
  );
}
