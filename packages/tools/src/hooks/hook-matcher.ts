/**
 * Claude Code's hook matchers: a regular expression on the tool name (or the PreCompact trigger /
 * SessionStart source), matched in full; empty, absent or "*" matches everything.
 */
export function compileMatcher(matcher: string | undefined): (value: string | undefined) => boolean {
  if (matcher === undefined || matcher === "" || matcher === "*") return () => true;
  const regex = new RegExp(`^(?:${matcher})$`);
  return (value) => value !== undefined && regex.test(value);
}

/** Settings validation: the message when a matcher is not a valid regular expression, else undefined. */
export function matcherError(matcher: string): string | undefined {
  try {
    compileMatcher(matcher);
    return undefined;
  } catch (error) {
    return `not a valid regular expression (${(error as Error).message})`;
  }
}
