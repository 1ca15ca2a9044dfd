import type { RE2JS } from "re2js";
import { re2 } from "./re2.js";

/**
 * Model-supplied regular expressions run on re2js, a pure-JavaScript port of RE2: matching time
 * is linear in the input whatever the pattern (R-S12). V8's own engine backtracks, and one
 * pattern such as `(a+)+$` over a long line blocks the whole process — every batch item and
 * sub-agent, and the signal handlers — until the match ends, which can be never.
 */
export interface LinearRegex {
  /** True when the pattern matches anywhere in `text`. */
  test(text: string): boolean;
  /** Every non-overlapping match, left to right, as UTF-16 offsets `[start, end)`. */
  matches(text: string): Iterable<readonly [start: number, end: number]>;
}

export interface LinearRegexOptions {
  readonly caseInsensitive?: boolean;
  /** `^`/`$` match at line ends (RE2's `(?m)`). */
  readonly multiLine?: boolean;
  /** `.` matches a newline too (RE2's `(?s)`). */
  readonly dotAll?: boolean;
}

export type CompiledRegex =
  | { readonly ok: true; readonly regex: LinearRegex }
  | { readonly ok: false; readonly error: string };

/** How a caller's syntax is turned into a matcher: re2js by default, V8's RegExp in the benchmark's "before". */
export type RegexEngine = (source: string, options: LinearRegexOptions) => CompiledRegex;

/**
 * The JavaScript-regex features RE2 lacks: each gets an error naming it rather than a different
 * result (lookbehind is supported: re2js runs captureless lookbehinds in linear time).
 */
const UNSUPPORTED: readonly { readonly pattern: RegExp; readonly feature: string }[] = [
  { pattern: /^\(\?=/, feature: "lookahead (?=…)" },
  { pattern: /^\(\?!/, feature: "negative lookahead (?!…)" },
  { pattern: /^\\[1-9]/, feature: "backreferences (\\1…)" },
  { pattern: /^\\k</, feature: "named backreferences (\\k<name>)" },
  { pattern: /^\(\?>/, feature: "atomic groups (?>…)" },
];

/**
 * ripgrep's classes are Unicode-aware (`\w` matches "ï", `\d` matches "٣"), RE2's Perl classes
 * are ASCII: they are rewritten into Unicode property classes. `\b` and `\B` stay RE2's, whose
 * word characters are ASCII (a lookahead would be needed for Unicode ones, see the README).
 */
const WORD = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}";
const SPACE = "\\p{White_Space}";
const OUTSIDE_CLASS: Readonly<Record<string, string>> = {
  w: `[${WORD}]`,
  W: `[^${WORD}]`,
  d: "\\p{Nd}",
  D: "\\P{Nd}",
  s: `[${SPACE}]`,
  S: `[^${SPACE}]`,
};
/** Inside a class only the positive ones can be spliced in (`[\W…]` stays ASCII). */
const INSIDE_CLASS: Readonly<Record<string, string>> = { w: WORD, d: "\\p{Nd}", s: SPACE };

/** JavaScript's escapes that RE2 spells differently. */
function javascriptEscape(source: string, index: number): { text: string; length: number } | undefined {
  const rest = source.slice(index);
  const braced = /^\\u\{([0-9a-fA-F]{1,6})\}/.exec(rest);
  if (braced !== null) return { text: `\\x{${braced[1]}}`, length: braced[0].length };
  const unicode = /^\\u([0-9a-fA-F]{4})/.exec(rest);
  if (unicode !== null) return { text: `\\x{${unicode[1]}}`, length: unicode[0].length };
  const control = /^\\c([A-Za-z])/.exec(rest);
  if (control !== null) {
    const code = (control[1] as string).toUpperCase().charCodeAt(0) - 64;
    return { text: `\\x{${code.toString(16)}}`, length: 3 };
  }
  return undefined;
}

/**
 * The pattern as RE2 should read it, or the unsupported feature it uses. A small scanner rather
 * than a parser: it tracks escapes and character classes, which is all the rewrite needs.
 */
export function toRe2Syntax(source: string): { ok: true; source: string } | { ok: false; feature: string } {
  let out = "";
  let inClass = false;
  for (let index = 0; index < source.length; index++) {
    const char = source[index] as string;
    if (!inClass) {
      const unsupported = UNSUPPORTED.find((entry) => entry.pattern.test(source.slice(index)));
      if (unsupported !== undefined) return { ok: false, feature: unsupported.feature };
    }
    if (char === "\\" && index + 1 < source.length) {
      const next = source[index + 1] as string;
      const spelled = javascriptEscape(source, index);
      if (spelled !== undefined) {
        out += spelled.text;
        index += spelled.length - 1;
        continue;
      }
      out += (inClass ? INSIDE_CLASS[next] : OUTSIDE_CLASS[next]) ?? `\\${next}`;
      index++;
      continue;
    }
    if (char === "[" && !inClass) {
      inClass = true;
      out += char;
      // A "]" right after "[" or "[^" is a literal member, as in RE2 and ripgrep.
      const lead = /^\^?\]/.exec(source.slice(index + 1));
      if (lead !== null) {
        out += lead[0];
        index += lead[0].length;
      }
      continue;
    }
    if (char === "]" && inClass) inClass = false;
    out += char;
  }
  return { ok: true, source: out };
}

export const linearRegexEngine: RegexEngine = (source, options) => {
  const translated = toRe2Syntax(source);
  if (!translated.ok) {
    return {
      ok: false,
      error:
        `The pattern ${JSON.stringify(source)} uses ${translated.feature}, which Grep does not support: ` +
        "patterns run on a linear-time engine (RE2 syntax, as ripgrep's) so that no pattern can hang the run. " +
        "Rewrite it without that feature.",
    };
  }
  const flags =
    re2().RE2JS.LOOKBEHINDS |
    (options.caseInsensitive === true ? re2().RE2JS.CASE_INSENSITIVE : 0) |
    (options.multiLine === true ? re2().RE2JS.MULTILINE : 0) |
    (options.dotAll === true ? re2().RE2JS.DOTALL : 0);
  let compiled: RE2JS;
  try {
    compiled = re2().RE2JS.compile(translated.source, flags);
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, "");
    return { ok: false, error: `Invalid regular expression ${JSON.stringify(source)}: ${reason}.` };
  }
  return {
    ok: true,
    regex: {
      test: (text) => compiled.test(text),
      *matches(text) {
        const matcher = compiled.matcher(text);
        while (matcher.find()) yield [matcher.start(), matcher.end()] as const;
      },
    },
  };
};
