/**
 * ripgrep's regex classes are Unicode-aware (`\w` matches "ï", `\d` matches "٣", `\b` sees "é"
 * as a word character); JavaScript's are ASCII even with the `u` flag. This rewrites them into
 * Unicode property classes for a `u`-flag RegExp, so the JS backend finds what ripgrep finds.
 * Inside a character class only `\w` and `\d` are rewritten (`[\W…]` stays ASCII: a negated
 * class cannot be spliced into another class without the `v` flag).
 */
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

export function toUnicodePattern(source: string): string {
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
