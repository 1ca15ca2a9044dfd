import type { Word, WordPart } from "unbash";

/**
 * One shell word as the permission checks see it (R-S1):
 * - `literal`: bash gives it exactly this value (quotes and escapes removed, nothing expanded);
 * - `pattern`: a glob or brace expansion of static parts, expanded by bash against the file system
 *   (`*.ts`, `{a,b}.md`); `pattern` is the glob form (picomatch syntax, matched by patterns/linear-glob.ts);
 * - `dynamic`: its value is only known when bash runs it (`$X`, `$(…)`, `$((…))`, `~user`).
 * `home` marks an unquoted leading `~/` (or a lone `~`): the value is relative to $HOME.
 */
export type ShellWord =
  | { readonly kind: "literal"; readonly text: string; readonly value: string; readonly home?: true }
  | { readonly kind: "pattern"; readonly text: string; readonly pattern: string; readonly home?: true }
  | { readonly kind: "dynamic"; readonly text: string };

const GLOB_SPECIAL = /[*?[\]{}()!@+\\|]/g;

export function shellWord(word: Word): ShellWord {
  const text = word.text;
  const parts = word.parts;
  if (parts === undefined || parts.length === 0)
    return withHome(text, { kind: "literal", text, value: word.value });
  let value = "";
  let pattern = "";
  let isPattern = false;
  for (const part of parts) {
    const literal = staticPartValue(part);
    if (literal !== undefined) {
      value += literal;
      pattern += literal.replace(GLOB_SPECIAL, "\\$&");
      continue;
    }
    if (part.type === "Glob" || part.type === "BraceExpansion" || part.type === "ExtendedGlob") {
      if (part.type !== "Glob" && part.parts?.some((inner) => !isStaticPart(inner)))
        return { kind: "dynamic", text };
      isPattern = true;
      value += part.text;
      pattern += part.text;
      continue;
    }
    return { kind: "dynamic", text };
  }
  if (isPattern) return withHome(text, { kind: "pattern", text, pattern });
  return withHome(text, { kind: "literal", text, value });
}

function isStaticPart(part: WordPart): boolean {
  return staticPartValue(part) !== undefined || part.type === "Glob";
}

function staticPartValue(part: WordPart): string | undefined {
  switch (part.type) {
    case "Literal":
    case "SingleQuoted":
    case "AnsiCQuoted":
      return part.value;
    case "DoubleQuoted":
    case "LocaleString": {
      let value = "";
      for (const child of part.parts) {
        if (child.type !== "Literal") return undefined;
        value += child.value;
      }
      return value;
    }
    default:
      return undefined;
  }
}

/** Bash expands an unquoted leading `~` or `~/`; `~user` names another home, unknown here. */
function withHome(text: string, word: ShellWord): ShellWord {
  if (!text.startsWith("~")) return word;
  if ((text !== "~" && !text.startsWith("~/")) || word.kind === "dynamic") return { kind: "dynamic", text };
  return { ...word, home: true };
}

/** The word's value when it is a literal, else undefined. */
export function literalValue(word: ShellWord | undefined): string | undefined {
  return word?.kind === "literal" ? word.value : undefined;
}

/** Single-quotes a value the way a rule or a message should show it (`'a b'`, `x`). */
function quoteForDisplay(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** How a word reads in a rule-matching text: its value when literal, else its source text. */
export function displayWord(word: ShellWord): string {
  return word.kind === "literal" ? quoteForDisplay(word.value) : word.text;
}
