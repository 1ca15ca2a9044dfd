import type { RegexEngine } from "../patterns/linear-regex.js";

/**
 * The JS backend's engine before R-S12, kept for the benchmark's "before" and for the tests'
 * controls (the same pattern hangs here): V8's backtracking RegExp with ripgrep's Unicode classes
 * rewritten in (`\w`, `\d`, `\b` as lookarounds), the `u` flag when the syntax allows it.
 * Never for model input: a pattern such as `(a+)+$` can run for ever.
 */
export const backtrackingRegexEngine: RegexEngine = (source, options) => {
  const flags = `${options.caseInsensitive === true ? "i" : ""}${options.multiLine === true ? "m" : ""}${options.dotAll === true ? "s" : ""}`;
  const body = source.startsWith("(?i)") ? source.slice(4) : source;
  const caseFlag = source.startsWith("(?i)") && !flags.includes("i") ? "i" : "";
  let regex: RegExp;
  try {
    regex = new RegExp(toUnicodePattern(body), `${flags}${caseFlag}u`);
  } catch {
    try {
      regex = new RegExp(body, `${flags}${caseFlag}`);
    } catch (error) {
      return {
        ok: false,
        error: `Invalid regular expression ${JSON.stringify(source)}: ${(error as Error).message}`,
      };
    }
  }
  const global = new RegExp(regex.source, `${regex.flags}g`);
  return {
    ok: true,
    regex: {
      test: (text) => regex.test(text),
      *matches(text) {
        global.lastIndex = 0;
        for (let match = global.exec(text); match !== null; match = global.exec(text)) {
          yield [match.index, match.index + match[0].length] as const;
          if (match[0].length === 0) global.lastIndex++;
        }
      },
    },
  };
};

const WORD = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";

const OUTSIDE_CLASS: Readonly<Record<string, string>> = {
  w: `[${WORD}]`,
  W: `[^${WORD}]`,
  d: "\\p{Nd}",
  D: "\\P{Nd}",
  b: `(?:(?<=[${WORD}])(?![${WORD}])|(?<![${WORD}])(?=[${WORD}]))`,
  B: `(?:(?<=[${WORD}])(?=[${WORD}])|(?<![${WORD}])(?![${WORD}]))`,
};

const INSIDE_CLASS: Readonly<Record<string, string>> = { w: WORD, d: "\\p{Nd}" };

function toUnicodePattern(source: string): string {
  let out = "";
  let inClass = false;
  for (let index = 0; index < source.length; index++) {
    const char = source[index] as string;
    if (char === "\\" && index + 1 < source.length) {
      const next = source[index + 1] as string;
      out += (inClass ? INSIDE_CLASS[next] : OUTSIDE_CLASS[next]) ?? `\\${next}`;
      index++;
    } else {
      if (char === "[" && !inClass) inClass = true;
      else if (char === "]" && inClass) inClass = false;
      out += char;
    }
  }
  return out;
}
