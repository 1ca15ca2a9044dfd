/** One `key = value` of a git config file; `key` is `section[.subsection].name`, section and name lower-cased. */
export interface GitConfigEntry {
  readonly key: string;
  /** Undefined for a bare boolean key (`[core] bare`). */
  readonly value: string | undefined;
}

/**
 * The entries of a git config file's text, read the way git reads them (git-config(1),
 * "Syntax") but without running git (R-S7, R-S9): `[section]`, `[section "subsection"]` and the
 * old `[section.subsection]`, `#`/`;` comments outside quotes, double-quoted parts with `\"`,
 * `\\`, `\n`, `\t`, `\b`, and lines continued with a trailing backslash. Lines it cannot read are
 * skipped: the caller looks for a few keys (`core.hooksPath`, `include.path`), never approves a file.
 */
export function gitConfigEntries(text: string): GitConfigEntry[] {
  const entries: GitConfigEntry[] = [];
  let section: string | undefined;
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index++) {
    let line = lines[index] as string;
    const header = /^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(line);
    if (header !== null) {
      const name = (header[1] as string).toLowerCase();
      const subsection = header[2]?.replace(/\\(.)/g, "$1");
      section = subsection === undefined ? name : `${name}.${subsection}`;
      line = header[3] ?? "";
    }
    // A value may go on over several lines, each ending in a backslash outside quotes.
    while (endsContinued(line) && index + 1 < lines.length) {
      line = line.slice(0, -1) + (lines[++index] as string);
    }
    const entry = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/.exec(stripComment(line));
    if (entry === null || section === undefined) continue;
    const name = (entry[1] as string).toLowerCase();
    entries.push({
      key: `${section}.${name}`,
      value: entry[2] === undefined ? undefined : unquote(entry[2]),
    });
  }
  return entries;
}

/** The last value of `key` (case-insensitive section and name), as git takes the last one. */
export function lastGitConfigValue(entries: readonly GitConfigEntry[], key: string): string | undefined {
  const wanted = normalizeKey(key);
  return entries.filter((entry) => normalizeKey(entry.key) === wanted && entry.value !== undefined).at(-1)
    ?.value;
}

/** Every `include.path` and `includeIf.<condition>.path`: files git may read this config from. */
export function gitConfigIncludes(entries: readonly GitConfigEntry[]): string[] {
  return entries
    .filter((entry) => /^include\.path$|^includeif\..*\.path$/i.test(entry.key) && entry.value !== undefined)
    .map((entry) => entry.value as string);
}

function normalizeKey(key: string): string {
  const first = key.indexOf(".");
  const last = key.lastIndexOf(".");
  if (first === -1) return key.toLowerCase();
  return `${key.slice(0, first).toLowerCase()}${key.slice(first, last)}${key.slice(last).toLowerCase()}`;
}

function endsContinued(line: string): boolean {
  const body = stripComment(line);
  return body.endsWith("\\") && !body.endsWith("\\\\");
}

/** The line without a comment that starts outside quotes. */
function stripComment(line: string): string {
  let quoted = false;
  for (let at = 0; at < line.length; at++) {
    const char = line[at];
    if (char === "\\") at++;
    else if (char === '"') quoted = !quoted;
    else if (!quoted && (char === "#" || char === ";")) return line.slice(0, at);
  }
  return line;
}

function unquote(raw: string): string {
  let value = "";
  let quoted = false;
  const text = raw.trim();
  for (let at = 0; at < text.length; at++) {
    const char = text[at] as string;
    if (char === '"') quoted = !quoted;
    else if (char === "\\") {
      const next = text[++at] ?? "";
      value += next === "n" ? "\n" : next === "t" ? "\t" : next === "b" ? "\b" : next;
    } else if (!quoted && /\s/.test(char) && /\s/.test(value.at(-1) ?? " ")) {
      // Unquoted runs of white space become one space (git keeps internal space, drops the ends).
    } else value += !quoted && /\s/.test(char) ? " " : char;
  }
  return value.trimEnd();
}
