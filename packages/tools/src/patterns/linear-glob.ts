import type { RE2JS } from "re2js";
import { re2 } from "./re2.js";

/**
 * Globs from the model (Glob, Grep's `glob`, LS's `ignore`, the words of a Bash command) compiled
 * to RE2 and matched in linear time (R-S12). picomatch compiles a glob to a backtracking
 * JavaScript RegExp: `*a*a*a*a*a*a*a*a*a*a*a*b` against a 30-character name already runs for
 * minutes, and a hostile `.gitignore`-style `**` chain does the same to a path.
 *
 * The syntax is picomatch's (all callers use `dot: true`): `*` and `?` within a segment, `**` as a
 * whole segment for any depth, `[…]` classes (`[!…]`, `[^…]`, `[[:alpha:]]`), `{a,b}`
 * alternatives, `{1..9}` / `{a..f}` ranges, extglobs `@( )`, `?( )`, `*( )`, `+( )`, `( | )`
 * groups, `\` escapes and a leading `!` that negates. `!( )` (a negated extglob) has no RE2
 * form and is refused with an error naming it.
 */
export interface CompiledGlob {
  /** True when the whole path (relative, "/"-separated) matches. */
  matches(path: string): boolean;
}

export type GlobCompileResult =
  | { readonly ok: true; readonly glob: CompiledGlob }
  | { readonly ok: false; readonly error: string };

export interface GlobOptions {
  /** A glob without "/" matches the path's last segment (picomatch's `basename`). */
  readonly basename?: boolean;
}

/** Longer globs are refused: a glob is a name pattern, and the compiled program grows with it. */
const MAX_GLOB_LENGTH = 1_000;
/** `{1..N}` ranges with more members than this are refused (each member is an alternative). */
const MAX_GLOB_RANGE = 1_000;
/** Nesting of braces, groups and extglobs. */
const MAX_DEPTH = 32;

class GlobSyntaxError extends Error {}

const REGEX_META = /[\\.+*?()|[\]{}^$]/g;
const quote = (text: string): string => text.replace(REGEX_META, "\\$&");

export function compileGlob(glob: string, options: GlobOptions = {}): GlobCompileResult {
  if (glob.length > MAX_GLOB_LENGTH)
    return {
      ok: false,
      error: `The glob is ${glob.length} characters long; at most ${MAX_GLOB_LENGTH} are accepted.`,
    };
  let body = glob;
  let negated = false;
  while (body.startsWith("!") && !body.startsWith("!(")) {
    negated = !negated;
    body = body.slice(1);
  }
  let source: string;
  try {
    source = new GlobTranslator(body).translate();
  } catch (error) {
    if (!(error instanceof GlobSyntaxError)) throw error;
    return { ok: false, error: `The glob ${JSON.stringify(glob)} ${error.message}` };
  }
  let regex: RE2JS;
  try {
    regex = re2().RE2JS.compile(`^(?:${source})$`, re2().RE2JS.DOTALL);
  } catch (error) {
    return {
      ok: false,
      error: `The glob ${JSON.stringify(glob)} cannot be compiled: ${(error as Error).message}.`,
    };
  }
  const onName = options.basename === true && !body.includes("/");
  return {
    ok: true,
    glob: {
      matches(path) {
        const subject = onName ? path.slice(path.lastIndexOf("/") + 1) : path;
        return regex.test(subject) !== negated;
      },
    },
  };
}

/** Several globs as one: a path matches when any of them does (picomatch's array form). */
export function compileGlobs(globs: readonly string[], options: GlobOptions = {}): GlobCompileResult {
  const compiled: CompiledGlob[] = [];
  for (const glob of globs) {
    const result = compileGlob(glob, options);
    if (!result.ok) return result;
    compiled.push(result.glob);
  }
  return { ok: true, glob: { matches: (path) => compiled.some((glob) => glob.matches(path)) } };
}

/** A recursive-descent translation of one glob into RE2 syntax. */
class GlobTranslator {
  private index = 0;
  private depth = 0;

  constructor(private readonly text: string) {}

  translate(): string {
    return this.sequence(new Set());
  }

  /** Elements up to (not including) one of `stops` at this level, or the end. */
  private sequence(stops: ReadonlySet<string>): string {
    let out = "";
    while (this.index < this.text.length) {
      const char = this.text[this.index] as string;
      if (stops.has(char)) break;
      out += this.element(char, stops);
    }
    return out;
  }

  private element(char: string, stops: ReadonlySet<string>): string {
    const text = this.text;
    const next = text[this.index + 1];
    if (char === "\\") {
      this.index += 2;
      return next === undefined ? "\\\\" : quote(next);
    }
    if (next === "(" && "@?*+!".includes(char)) return this.extglob(char);
    if (char === "*") return this.star(stops);
    if (char === "?") {
      this.index++;
      return "[^/]";
    }
    if (char === "/" && this.atGlobstarTail(stops)) {
      this.index += 3;
      return "(?:/.*)?"; // "a/**" matches "a" itself and everything below it
    }
    if (char === "[") return this.characterClass();
    if (char === "{") return this.braces();
    if (char === "(") return this.group("(", "");
    this.index++;
    return quote(char);
  }

  private star(stops: ReadonlySet<string>): string {
    const start = this.index;
    while (this.text[this.index] === "*") this.index++;
    const run = this.index - start;
    const before = start === 0 ? "/" : this.text[start - 1];
    const after = this.text[this.index];
    const wholeSegment = before === "/" && (after === undefined || after === "/" || stops.has(after));
    if (run < 2 || !wholeSegment) return "[^/]*";
    if (after === "/") {
      this.index++;
      return "(?:[^/]+/)*"; // "**/" = any number of directories, none included
    }
    return ".*";
  }

  /** `/**` closing the glob (or the alternative it is in). */
  private atGlobstarTail(stops: ReadonlySet<string>): boolean {
    if (!this.text.startsWith("/**", this.index)) return false;
    const after = this.text[this.index + 3];
    return after === undefined || stops.has(after);
  }

  private characterClass(): string {
    const text = this.text;
    let cursor = this.index + 1;
    let negated = false;
    if (text[cursor] === "!" || text[cursor] === "^") {
      negated = true;
      cursor++;
    }
    let members = "";
    let first = true;
    while (cursor < text.length && (text[cursor] !== "]" || first)) {
      const char = text[cursor] as string;
      first = false;
      const posix = /^\[:[a-z]+:\]/.exec(text.slice(cursor));
      if (posix !== null) {
        members += posix[0];
        cursor += posix[0].length;
      } else if (char === "\\" && cursor + 1 < text.length) {
        members += quote(text[cursor + 1] as string);
        cursor += 2;
      } else if (char === "-" && members !== "" && text[cursor + 1] !== "]") {
        members += "-";
        cursor++;
      } else {
        members += quote(char);
        cursor++;
      }
    }
    if (cursor >= text.length) {
      this.index++; // no closing "]": a literal "["
      return "\\[";
    }
    this.index = cursor + 1;
    return negated ? `[^/${members}]` : `[${members}]`;
  }

  private braces(): string {
    const range = /^\{(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])\}/.exec(this.text.slice(this.index));
    if (range !== null) {
      this.index += range[0].length;
      return this.range(range[1] as string, range[2] as string);
    }
    const start = this.index;
    this.enter();
    this.index++;
    const alternatives = [this.sequence(new Set([",", "}"]))];
    while (this.text[this.index] === ",") {
      this.index++;
      alternatives.push(this.sequence(new Set([",", "}"])));
    }
    this.depth--;
    if (this.text[this.index] !== "}" || alternatives.length < 2) {
      // "{a}" and an unclosed "{" are literal, as in picomatch and bash.
      this.index = start + 1;
      return "\\{";
    }
    this.index++;
    return `(?:${alternatives.join("|")})`;
  }

  private range(from: string, to: string): string {
    if (/^[a-zA-Z]$/.test(from) !== /^[a-zA-Z]$/.test(to)) return quote(`{${from}..${to}}`);
    if (/^[a-zA-Z]$/.test(from)) {
      const [low, high] = from <= to ? [from, to] : [to, from];
      return `[${quote(low)}-${quote(high)}]`;
    }
    const [low, high] = [Number(from), Number(to)].sort((left, right) => left - right) as [number, number];
    if (high - low + 1 > MAX_GLOB_RANGE)
      throw new GlobSyntaxError(
        `has a range of ${high - low + 1} numbers; at most ${MAX_GLOB_RANGE} are accepted.`,
      );
    const members: string[] = [];
    for (let value = low; value <= high; value++) members.push(quote(String(value)));
    return `(?:${members.join("|")})`;
  }

  private extglob(kind: string): string {
    if (kind === "!")
      throw new GlobSyntaxError(
        'uses a negated extglob "!(…)", which has no linear-time form; exclude with a separate "!glob" instead.',
      );
    this.index++; // the kind; group() consumes "("
    return this.group(kind, { "@": "", "?": "?", "*": "*", "+": "+" }[kind] ?? "");
  }

  /** `(a|b)` and the extglobs' body; an unclosed "(" is literal. */
  private group(kind: string, quantifier: string): string {
    const start = this.index;
    this.enter();
    this.index++;
    const alternatives = [this.sequence(new Set(["|", ")"]))];
    while (this.text[this.index] === "|") {
      this.index++;
      alternatives.push(this.sequence(new Set(["|", ")"])));
    }
    this.depth--;
    if (this.text[this.index] !== ")") {
      this.index = start + 1;
      return kind === "(" ? "\\(" : `${quote(kind)}\\(`;
    }
    this.index++;
    return `(?:${alternatives.join("|")})${quantifier}`;
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH)
      throw new GlobSyntaxError(`nests braces or groups more than ${MAX_DEPTH} deep.`);
  }
}
