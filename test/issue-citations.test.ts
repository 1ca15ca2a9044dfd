import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const TOP_DIRS = ["packages", "apps", "test", "bench", "examples", "scripts"];
const SKIPPED_DIRS = new Set(["node_modules", "dist", ".git", ".turbo", "release", "results", ".forkloop"]);
/**
 * An issue number: "issue" (or "issues") then a number, joined by a space, "-" or "#", in any
 * case; or a bare "#N" ("#N item", "(#N)", "see #N"). Another repository's issue keeps its name
 * (`owner/repo#N`), which says whose it is.
 */
const CITATION = /\bissues?[- ]?#?\d+|(?<![\w/&-])#\d+\b/i;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return SKIPPED_DIRS.has(name) ? [] : sourceFiles(path);
    return /\.(ts|mts|mjs)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

interface Prose {
  kind: "comment" | "test title";
  text: string;
  offset: number;
}

/** A `/` here starts a regular expression literal, not a division (the previous token decides). */
function regexCanStart(code: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && /\s/.test(code[i] ?? "")) i--;
  if (i < 0) return true;
  const previous = code[i] ?? "";
  if ("(,=:[!&|?{};+-*%<>~^".includes(previous)) return true;
  return /\b(?:return|typeof|case|do|else|in|of|void|yield|await)$/.test(
    code.slice(Math.max(0, i - 6), i + 1),
  );
}

/** The end of the quoted string or template starting at `at` (templates with `${…}` nest). */
function stringEnd(code: string, at: number): number {
  const quote = code[at];
  let i = at + 1;
  while (i < code.length) {
    const c = code[i];
    if (c === "\\") i += 2;
    else if (c === quote) return i + 1;
    else if (quote === "`" && c === "$" && code[i + 1] === "{") i = skipCode(code, i + 2, "}");
    else i++;
  }
  return i;
}

/** Skips code up to the closing `until` at depth 0 (inside a template's `${…}`). */
function skipCode(code: string, at: number, until: string): number {
  let depth = 0;
  let i = at;
  while (i < code.length) {
    const c = code[i] ?? "";
    if (c === "'" || c === '"' || c === "`") {
      i = stringEnd(code, i);
      continue;
    }
    if (c === until && depth === 0) return i + 1;
    if (c === "{") depth++;
    if (c === "}") depth--;
    i++;
  }
  return i;
}

/**
 * The comments of a source file, and its test titles: the first string argument of
 * `describe(`, `it(`, `test(` and of the call an `.each(…)` returns.
 */
function prose(code: string): Prose[] {
  const found: Prose[] = [];
  let i = 0;
  while (i < code.length) {
    const c = code[i] ?? "";
    const next = code[i + 1];
    if (c === "/" && next === "/") {
      const end = code.indexOf("\n", i) === -1 ? code.length : code.indexOf("\n", i);
      found.push({ kind: "comment", text: code.slice(i, end), offset: i });
      i = end;
    } else if (c === "/" && next === "*") {
      const end = code.indexOf("*/", i + 2) === -1 ? code.length : code.indexOf("*/", i + 2) + 2;
      found.push({ kind: "comment", text: code.slice(i, end), offset: i });
      i = end;
    } else if (c === "'" || c === '"' || c === "`") {
      const end = stringEnd(code, i);
      const before = code.slice(Math.max(0, i - 40), i);
      if (/(?:\b(?:describe|it|test)(?:\.\w+)*|\))\(\s*$/.test(before)) {
        found.push({ kind: "test title", text: code.slice(i, end), offset: i });
      }
      i = end;
    } else if (c === "/" && regexCanStart(code, i)) {
      i++;
      let inClass = false;
      while (i < code.length && code[i] !== "\n") {
        const r = code[i];
        if (r === "\\") i++;
        else if (r === "[") inClass = true;
        else if (r === "]") inClass = false;
        else if (r === "/" && !inClass) break;
        i++;
      }
      i++;
    } else i++;
  }
  return found;
}

function lineOf(code: string, offset: number): number {
  return code.slice(0, offset).split("\n").length;
}

describe("comments and test titles give the reason or an R-id, never an issue number", () => {
  it("the prose finder sees comments and titles, not other strings or regular expressions", () => {
    const sample = [
      "// a comment (issue 11)",
      'const label = "before issue 11";',
      "const re = /issue 3/;",
      "/* block",
      "   #27 item 3 */",
      "// as owner/repo#12 reported it, not (see #13)",
      'it.each([1])("issue-14 point 7: %s", () => {});',
      ["describe(`R-R5: $", '{"x"} issue 9`, () => {});'].join(""),
    ].join("\n");
    const cited = prose(sample)
      .filter((p) => CITATION.test(p.text))
      .map((p) => `${p.kind} ${lineOf(sample, p.offset)}`);
    expect(cited).toEqual(["comment 1", "comment 4", "comment 6", "test title 7", "test title 8"]);
    // Another repository's issue, named with its repository, is a source, not this project's issue.
    expect(CITATION.exec("// as owner/repo#12 reported it")).toBeNull();
  });

  for (const top of TOP_DIRS) {
    it(`${top}/: no issue number in a comment or a test title (REQUIREMENTS.md has the R-ids)`, () => {
      const cited = sourceFiles(join(root, top)).flatMap((path) => {
        const code = readFileSync(path, "utf8");
        return prose(code)
          .filter((p) => CITATION.test(p.text))
          .map(
            (p) =>
              `${relative(root, path)}:${lineOf(code, p.offset)} (${p.kind}): ${CITATION.exec(p.text)?.[0]}`,
          );
      });
      expect(cited).toEqual([]);
    });
  }
});
