import type { RE2Set } from "re2js";
import { re2 } from "./re2.js";

/**
 * `.gitignore` patterns compiled to RE2 and matched in linear time (R-S12). The `ignore` package
 * compiles each line to a backtracking JavaScript RegExp: a chain such as `**∕a/**∕a/…/b` against
 * a deep path ran for minutes, and the lines come from the repository (or a file the model just
 * wrote) — hostile input that must not stop the run.
 *
 * The semantics are the `ignore` package's (7.0.16), which callers used before and which
 * `linear-gitignore.test.ts` holds this file to over a table: comments and blank lines, `!`
 * negation (the last matching line decides), trailing spaces trimmed unless escaped, `\`
 * escapes, a slash at the start or in the middle anchors the line to its `.gitignore`'s
 * directory, a trailing slash matches directories only (paths given with a trailing "/"), `*`
 * and `?` within a segment, `[…]` classes (`[!…]`, POSIX names, never "/"; an unclosed one
 * matches nothing), `**∕` / `/**∕` / `/**` as any number of directories, case-insensitive by
 * default, and nothing below an ignored directory is re-included. All lines of one list run as
 * one RE2 set: one pass over the path whatever the number of lines.
 *
 * Where the engines differ: RE2 folds case by Unicode simple folding (`k` also matches the Kelvin
 * sign, `s` the long s; JavaScript's `i` does not), and a `?` or class is one code point (in the
 * package one UTF-16 unit, in git one byte).
 */
export interface GitignoreVerdict {
  /** A line matched last and it ignores the path (or an ancestor directory is ignored). */
  readonly ignored: boolean;
  /** A `!` line matched last. */
  readonly unignored: boolean;
}

export interface LinearIgnoreOptions {
  /** Default true, as the `ignore` package's default. */
  readonly ignoreCase?: boolean;
}

/** One compiled line: its RE2 source and whether it is a `!` line. */
export interface GitignoreLine {
  readonly negative: boolean;
  readonly source: string;
}

const NEITHER: GitignoreVerdict = { ignored: false, unignored: false };
/** Lines per RE2 set: keeps each compiled program well under re2js's size limit. */
const LINES_PER_SET = 256;
/** Verdicts remembered per list (the walk asks for every ancestor again); cleared when full. */
const CACHE_LIMIT = 50_000;

/**
 * A list of gitignore lines (the `ignore` package's `add`/`test`/`ignores`): paths are relative,
 * "/"-separated, a directory written with a trailing "/".
 */
export class LinearIgnore {
  private readonly lines: GitignoreLine[] = [];
  private sets: { readonly first: number; readonly set: RE2Set }[] | undefined;
  private readonly cache = new Map<string, GitignoreVerdict>();
  private readonly ignoreCase: boolean;

  constructor(options: LinearIgnoreOptions = {}) {
    this.ignoreCase = options.ignoreCase ?? true;
  }

  /** Adds the lines of a `.gitignore` text (or single patterns). */
  add(patterns: string | readonly string[]): this {
    const lines = typeof patterns === "string" ? splitLines(patterns) : patterns;
    lines.forEach((line, index) => {
      const compiled = compileGitignoreLine(line, { stripBom: index === 0 });
      if (compiled !== undefined) this.lines.push(compiled);
    });
    this.sets = undefined;
    this.cache.clear();
    return this;
  }

  /** The verdict for `path`: its ancestors first (nothing below an ignored directory comes back), then its own last matching line. */
  test(path: string): GitignoreVerdict {
    const known = this.cache.get(path);
    if (known !== undefined) return known;
    const parent = parentOf(path);
    const parentVerdict = parent === "" ? undefined : this.test(parent);
    const verdict = parentVerdict?.ignored === true ? parentVerdict : this.ownVerdict(path);
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(path, verdict);
    return verdict;
  }

  ignores(path: string): boolean {
    return this.test(path).ignored;
  }

  /** The last line matching the path itself. */
  private ownVerdict(path: string): GitignoreVerdict {
    if (this.lines.length === 0) return NEITHER;
    this.sets ??= this.compileSets();
    for (let index = this.sets.length - 1; index >= 0; index--) {
      const { first, set } = this.sets[index] as { first: number; set: RE2Set };
      const matched = set.match(path);
      if (matched.length === 0) continue;
      const line = this.lines[first + Math.max(...matched)] as GitignoreLine;
      return { ignored: !line.negative, unignored: line.negative };
    }
    return NEITHER;
  }

  private compileSets(): { first: number; set: RE2Set }[] {
    const flags = this.ignoreCase ? re2().RE2JS.CASE_INSENSITIVE : 0;
    const sets: { first: number; set: RE2Set }[] = [];
    for (let first = 0; first < this.lines.length; first += LINES_PER_SET) {
      const set = new (re2().RE2Set)(re2().RE2Set.UNANCHORED, flags);
      for (const line of this.lines.slice(first, first + LINES_PER_SET)) set.add(line.source);
      set.compile();
      sets.push({ first, set });
    }
    return sets;
  }
}

export function linearIgnore(options: LinearIgnoreOptions = {}): LinearIgnore {
  return new LinearIgnore(options);
}

/** git drops one CR before each LF and one at the very end; empty lines are no rules. */
function splitLines(text: string): string[] {
  const body = text.endsWith("\r") ? text.slice(0, -1) : text;
  return body.split(/\r?\n/).filter((line) => line !== "");
}

/**
 * One `.gitignore` line as RE2 source, or undefined when it is no rule: a comment, blank, a lone
 * `!`, a trailing unpaired backslash, or a line that can match nothing (an unclosed `[`, an
 * unknown POSIX class, a final escaped slash).
 */
export function compileGitignoreLine(
  line: string,
  options: { readonly stripBom?: boolean } = {},
): GitignoreLine | undefined {
  let body = options.stripBom === true && line.startsWith("\uFEFF") ? line.slice(1) : line;
  if (body.startsWith("#")) return undefined;
  const negative = body.startsWith("!");
  if (negative) body = body.slice(1);
  if (body.endsWith(" ")) body = trimTrailingSpaces(body);
  if (body === "" || hasTrailingBackslash(body)) return undefined;
  if (body.startsWith("\\!") || body.startsWith("\\#")) body = body.slice(1);
  // `/**` is every path, as `**` is.
  if (/^\/\*{2,}$/.test(body)) body = "**";
  const tokens = tokenize(body);
  if (tokens === undefined) return undefined;
  const source = translate(tokens, /\/(?!$)/.test(body));
  return source === undefined ? undefined : { negative, source };
}

/** Trailing spaces go, unless the last one is escaped by an odd run of backslashes (then it stays, unescaped). */
function trimTrailingSpaces(body: string): string {
  let end = body.length;
  while (body[end - 1] === " ") end--;
  let backslashes = 0;
  while (body[end - backslashes - 1] === "\\") backslashes++;
  return backslashes % 2 === 1 ? `${body.slice(0, end - 1)} ` : body.slice(0, end);
}

function hasTrailingBackslash(body: string): boolean {
  let count = 0;
  while (body[body.length - count - 1] === "\\") count++;
  return count % 2 === 1;
}

/** A pattern read into what it means: literal characters, separators, `?`, star runs, classes. */
type Token =
  | { readonly type: "literal"; readonly char: string }
  | { readonly type: "separator" }
  | { readonly type: "any" }
  | { readonly type: "stars"; readonly count: number }
  | { readonly type: "class"; readonly source: string };

/** The character (a whole code point) at `index`. */
function charAt(text: string, index: number): string | undefined {
  const code = text.codePointAt(index);
  return code === undefined ? undefined : String.fromCodePoint(code);
}

/** The tokens, or undefined when the line can match nothing. */
function tokenize(body: string): Token[] | undefined {
  const tokens: Token[] = [];
  let index = 0;
  while (index < body.length) {
    const char = charAt(body, index) as string;
    if (char === "\\") {
      const escaped = charAt(body, index + 1) as string;
      // git removes a final directory slash before matching: an escaped one leaves an escape with nothing after it.
      if (escaped === "/" && index + 2 === body.length) return undefined;
      tokens.push({ type: "literal", char: escaped });
      index += 1 + escaped.length;
    } else if (char === "[") {
      const scanned = scanBracket(body, index);
      if (scanned?.source === undefined) return undefined;
      tokens.push({ type: "class", source: scanned.source });
      index = scanned.end + 1;
    } else if (char === "*") {
      let end = index;
      while (body[end] === "*") end++;
      tokens.push({ type: "stars", count: end - index });
      index = end;
    } else {
      tokens.push(
        char === "/" ? { type: "separator" } : char === "?" ? { type: "any" } : { type: "literal", char },
      );
      index += char.length;
    }
  }
  return tokens;
}

const SEGMENT_WILDCARD = "[^/]*";
const ENDS_HERE = "(?:$|/$)"; // "foo" matches the file foo and the directory foo/

/** RE2 source for the tokens; `anchored`: the pattern has a slash before its end. */
function translate(tokens: readonly Token[], anchored: boolean): string | undefined {
  const isSeparator = (at: number) => tokens[at]?.type === "separator";
  /** A run of two or more stars that fills a segment is a globstar; any other run is one `*`. */
  const isGlobstar = (at: number) => {
    const token = tokens[at];
    return (
      token?.type === "stars" &&
      token.count >= 2 &&
      (at === 0 || isSeparator(at - 1)) &&
      (at === tokens.length - 1 || isSeparator(at + 1))
    );
  };
  const leadingSlash = isSeparator(0);
  let at = leadingSlash ? 1 : 0;
  // Leading `**/` (after a leading slash too): in every directory.
  let everyDirectory = false;
  while (isGlobstar(at) && isSeparator(at + 1)) {
    everyDirectory = true;
    at += 2;
  }
  let out = everyDirectory ? "(?:^|/)" : leadingSlash || anchored ? "^" : "(?:^|/)";
  let ending = ENDS_HERE;
  /** Whether the last thing written is a "/" of the pattern's own (not an anchor, not inside a globstar). */
  let afterSeparator = false;
  for (; at < tokens.length; at++) {
    const token = tokens[at] as Token;
    const last = at === tokens.length - 1;
    switch (token.type) {
      case "separator":
        if (isGlobstar(at + 1)) {
          if (at + 2 === tokens.length) {
            // "a/**": everything inside a, not a itself.
            out += "/(?s:.)";
            ending = "";
            at = tokens.length;
          } else if (at + 3 === tokens.length) {
            out += "(?:/[^/]+)+"; // "a/**/": a directory at least one level inside a
            at += 1;
          } else {
            out += "(?:/[^/]+)*"; // "a/**/b": zero or more directories between
            at += 1;
          }
        } else {
          out += "/";
          if (last) ending = "$"; // "foo/": directories only
          afterSeparator = true;
          continue;
        }
        break;
      case "stars":
        // "abc/*" needs a name after the slash; elsewhere a trailing star may be empty.
        out += last && afterSeparator ? "[^/]+" : SEGMENT_WILDCARD;
        break;
      case "any":
        out += "[^/]";
        break;
      case "class":
        out += token.source;
        break;
      case "literal":
        out += quote(token.char);
        break;
      default: {
        const unreachable: never = token;
        throw new Error(`unknown token ${JSON.stringify(unreachable)}`);
      }
    }
    afterSeparator = false;
  }
  return out + ending;
}

/** Hex escapes for every character: no character of a path is special to RE2 then. */
function quote(char: string): string {
  return `\\x{${(char.codePointAt(0) as number).toString(16)}}`;
}

/** git's ASCII classes (wildmatch.c's own ctype), as code point ranges; none holds "/". */
const POSIX_CLASSES: Readonly<Record<string, readonly (readonly [number, number])[]>> = {
  alnum: [range("0", "9"), range("A", "Z"), range("a", "z")],
  alpha: [range("A", "Z"), range("a", "z")],
  blank: [range(" ", " "), range("\t", "\t")],
  cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: [range("0", "9")],
  graph: [range("!", "."), range("0", "~")],
  lower: [range("a", "z")],
  print: [range(" ", "."), range("0", "~")],
  punct: [range("!", "."), range(":", "@"), range("[", "`"), range("{", "~")],
  space: [range(" ", " "), range("\t", "\t"), range("\n", "\n"), range("\r", "\r")],
  upper: [range("A", "Z")],
  xdigit: [range("0", "9"), range("A", "F"), range("a", "f")],
};

function range(from: string, to: string): readonly [number, number] {
  return [from.codePointAt(0) as number, to.codePointAt(0) as number];
}

/**
 * A bracket expression starting at `body[start] === "["`, read as git's wildmatch.c (and the
 * `ignore` package) read it: a `]` right after `[` or `[!` is a member, `\` escapes a member,
 * `a-z` ranges (an out-of-order one keeps only its first member), `[:name:]` classes. Undefined:
 * never closed, or an unknown class name — the whole line then matches nothing. `source`
 * undefined: a class that could only match "/", which no class matches.
 */
function scanBracket(body: string, start: number): { end: number; source: string | undefined } | undefined {
  let index = start + 1;
  let negated = false;
  if (body[index] === "!" || body[index] === "^") {
    negated = true;
    index++;
  }
  const ranges: (readonly [number, number])[] = [];
  let previous: string | undefined;
  for (;;) {
    const char = charAt(body, index);
    if (char === undefined) return undefined;
    if (char === "\\") {
      const escaped = charAt(body, ++index) as string;
      ranges.push(range(escaped, escaped));
      previous = escaped;
      index += escaped.length;
    } else if (char === "-" && previous !== undefined && index + 1 < body.length && body[index + 1] !== "]") {
      index++;
      let to = charAt(body, index) as string;
      if (to === "\\") to = charAt(body, ++index) as string;
      const low = previous.codePointAt(0) as number;
      const high = to.codePointAt(0) as number;
      if (low <= high) ranges.push([low, high]);
      previous = undefined;
      index += to.length;
    } else if (char === "[" && body[index + 1] === ":") {
      const nameStart = index + 2;
      const end = body.indexOf("]", nameStart);
      if (end < 0) return undefined;
      if (end > nameStart && body[end - 1] === ":") {
        const name = body.slice(nameStart, end - 1);
        if (!Object.hasOwn(POSIX_CLASSES, name)) return undefined;
        ranges.push(...(POSIX_CLASSES[name] ?? []));
        previous = undefined;
        index = end + 1;
      } else {
        ranges.push(range("[", "["));
        previous = "[";
        index++;
      }
    } else {
      ranges.push(range(char, char));
      previous = char;
      index += char.length;
    }
    if (body[index] === "]") return { end: index, source: classSource(negated, ranges) };
  }
}

const SLASH = 0x2f;

/** A class never matches "/": the negated form excludes it, the plain one has it cut out of its ranges. */
function classSource(negated: boolean, ranges: readonly (readonly [number, number])[]): string | undefined {
  const hex = (code: number) => `\\x{${code.toString(16)}}`;
  const member = ([low, high]: readonly [number, number]) =>
    low === high ? hex(low) : `${hex(low)}-${hex(high)}`;
  if (negated) return `[^/${ranges.map(member).join("")}]`;
  const withoutSlash = ranges.flatMap(([low, high]): (readonly [number, number])[] => {
    if (high < SLASH || low > SLASH) return [[low, high]];
    return [
      ...(low < SLASH ? [[low, SLASH - 1] as const] : []),
      ...(high > SLASH ? [[SLASH + 1, high] as const] : []),
    ];
  });
  return withoutSlash.length === 0 ? undefined : `[${withoutSlash.map(member).join("")}]`;
}

/** 'a/b/c' → 'a/b/'; 'a/b/' → 'a/'; 'a' → '' (the `ignore` package's parent, with its trailing slash). */
function parentOf(path: string): string {
  if (path.startsWith("/") || path.includes("//")) {
    const slices = path.split("/").filter(Boolean);
    slices.pop();
    return slices.length > 0 ? `${slices.join("/")}/` : "";
  }
  const end = path.length - 1;
  const cut = path.lastIndexOf("/", path.endsWith("/") ? end - 1 : end);
  return cut < 0 ? "" : path.slice(0, cut + 1);
}
