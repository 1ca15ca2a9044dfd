import { linearRegexEngine, toRe2Syntax } from "../patterns/linear-regex.js";

/**
 * Claude Code's hook matchers: a regular expression on the tool name (or the PreCompact trigger /
 * SessionStart source), matched in full; empty, absent or "*" matches everything. Matched on RE2 in
 * linear time (R-S12): a matcher comes from a settings file a project may ship, and one with nested
 * quantifiers against a long MCP tool name would otherwise stop the run. RE2 has no lookahead or
 * backreferences; a matcher using them is a settings error naming the feature.
 */
export function compileMatcher(matcher: string | undefined): (value: string | undefined) => boolean {
  if (matcher === undefined || matcher === "" || matcher === "*") return () => true;
  let matches = compiled.get(matcher);
  if (matches === undefined) {
    const syntax = toRe2Syntax(matcher);
    if (!syntax.ok)
      throw new Error(
        `${JSON.stringify(matcher)} uses ${syntax.feature}, which hook matchers do not support: they run on a linear-time engine (RE2 syntax) so that no matcher can hang the run`,
      );
    const result = linearRegexEngine(`^(?:${matcher})$`, {});
    if (!result.ok) throw new Error(result.error);
    const { regex } = result;
    matches = (value) => value !== undefined && regex.test(value);
    if (compiled.size >= COMPILED_LIMIT) compiled.clear();
    compiled.set(matcher, matches);
  }
  return matches;
}

/** Matchers by source: every hook event asks again, and re2js compiles slower than V8. */
const compiled = new Map<string, (value: string | undefined) => boolean>();
const COMPILED_LIMIT = 500;

/** Settings validation: the message when a matcher is not a valid regular expression, else undefined. */
export function matcherError(matcher: string): string | undefined {
  try {
    compileMatcher(matcher);
    return undefined;
  } catch (error) {
    return `not a valid regular expression (${(error as Error).message})`;
  }
}
