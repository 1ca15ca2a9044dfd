import ignore from "ignore";
import { describe, expect, it } from "vitest";
import { compileGitignoreLine, linearIgnore } from "./linear-gitignore.js";

/** Ordinary lines of real `.gitignore` files, and the rules' edge cases. */
const PATTERNS = [
  "node_modules",
  "node_modules/",
  "/node_modules",
  "dist/",
  "/build",
  "*.log",
  "!important.log",
  "*.py[cod]",
  "*.[oa]",
  "*~",
  ".DS_Store",
  ".env",
  ".env.*",
  "!.env.example",
  "*.sw?",
  "coverage/",
  "/coverage/**",
  "**/foo",
  "**/foo/bar",
  "foo/**",
  "foo/**/",
  "a/**/b",
  "a/**/*.ts",
  "a/**/**/b",
  "**/",
  "**",
  "*",
  "/*",
  "/**",
  "/**/x",
  "***/x",
  "a/***",
  "abc/*",
  "abc/*/",
  "a*b",
  "a**b",
  "a/**b",
  "src/*.ts",
  "src/*/x",
  "doc/frotz/",
  "frotz/",
  "foo/bar",
  "/foo/bar/",
  "\\#notacomment",
  "#comment",
  "\\!bang",
  "!",
  "",
  "   ",
  "trailing   ",
  "escaped\\ ",
  "a\\*b",
  "a\\?b",
  "\\[x]",
  "[!a]x",
  "[^a]x",
  "[a-c]x",
  "[c-a]x",
  "[]a]x",
  "[a-]x",
  "[[:alpha:]]x",
  "[[:digit:][:upper:]]x",
  "[[:nope:]]x",
  "[abc",
  "x[",
  "[/]x",
  "a[/]b",
  "[.-0]x",
  "x\\/",
  "x\\",
  "x\\\\",
  "a b",
  "*.TXT",
  "Makefile",
  "?",
  "??",
  "a?",
  "/a?/",
  "a/b/c",
  ".*",
  "!*.md",
  "café",
  "😀*",
  "x.ts ",
];

const PATHS = [
  "node_modules",
  "node_modules/",
  "node_modules/x.js",
  "a/node_modules/",
  "a/node_modules/y/z.js",
  "dist/",
  "dist",
  "dist/a.js",
  "src/dist/",
  "build",
  "build/",
  "a/build",
  "x.log",
  "a/b/x.log",
  "important.log",
  "a/important.log",
  "m.pyc",
  "m.pyx",
  "a.o",
  "a.c",
  "f~",
  ".DS_Store",
  "a/.DS_Store",
  ".env",
  ".env.local",
  ".env.example",
  "a/.env",
  "x.swp",
  "coverage/",
  "coverage/x",
  "coverage/a/b",
  "foo",
  "foo/",
  "a/foo",
  "a/b/foo/",
  "foo/bar",
  "x/foo/bar",
  "foo/x",
  "foo/x/",
  "foo/x/y",
  "a/b",
  "a/x/b",
  "a/x/y/b",
  "a/b/",
  "a/x.ts",
  "a/x/y.ts",
  "abc/",
  "abc/d",
  "abc/d/",
  "abc/d/e",
  "ab",
  "axxb",
  "a/xb",
  "src/x.ts",
  "src/a/x.ts",
  "src/a/x",
  "doc/frotz/",
  "a/doc/frotz/",
  "frotz/",
  "frotz",
  "#notacomment",
  "!bang",
  "trailing",
  "trailing   ",
  "escaped ",
  "escaped",
  "a*b",
  "a?b",
  "acb",
  "[x]",
  "x",
  "ax",
  "bx",
  "cx",
  "]x",
  "-x",
  "5x",
  "Ax",

  "a/b/c",
  "a b",
  "X.TXT",
  "x.txt",
  "makefile",
  "MAKEFILE",
  "q",
  "qq",
  "a/q",
  "aq/",
  "aq/z",
  ".hidden",
  "a/.hidden/",
  "README.md",
  "café",
  "CAFÉ",
  "😀z",
  "x.ts",
  "x.ts ",
  "x\\",
  "a/x.log/",
  "deep/a/b/c/d/e.log",
];

/** Where the linear list and the `ignore` package disagree on `text` over `paths`, one line each. */
function differences(text: string, paths: readonly string[], withVerdict = true): string[] {
  const linear = linearIgnore().add(text);
  const expected = ignore().add(text);
  return paths.flatMap((path) => {
    const actual = linear.test(path);
    const wanted = expected.test(path);
    if (actual.ignored === wanted.ignored && actual.unignored === wanted.unignored) return [];
    const verdict = withVerdict ? `: ${JSON.stringify(actual)}` : "";
    return [`${JSON.stringify(text)} on ${JSON.stringify(path)}${verdict}`];
  });
}

/**
 * The one documented difference in the table: a `?` is one code point here and one UTF-16 unit
 * in the package (git: one byte), so `??` matches an emoji and a letter only here.
 */
const KNOWN_DIFFERENCES = ['"??" on "😀z"'];

describe("R-S12: gitignore semantics on the linear engine match the ignore package", () => {
  it("every ordinary line against every path, as a file and as a directory", () => {
    expect(PATTERNS.flatMap((pattern) => differences(pattern, PATHS, false))).toEqual(KNOWN_DIFFERENCES);
  });

  it("whole files: negation, order, nested re-inclusion that cannot happen below an ignored directory", () => {
    const files = [
      "*.log\n!keep.log\n",
      "!keep.log\n*.log\n",
      "build/\n!build/keep.txt\n",
      "build/*\n!build/keep.txt\n",
      "/*\n!/src/\n/src/*\n!/src/main/\n",
      "# comment\n\nnode_modules\r\ndist/\r\n*.tmp\r",
      "\uFEFF*.bak\n",
      "secret/**\n!secret/**/\n!secret/**/*.pub\n",
      "*.TXT\n!A.txt\n",
    ];
    const paths = [
      ...PATHS,
      "keep.log",
      "a/keep.log",
      "build/keep.txt",
      "src/main/x",
      "src/other/x",
      "secret/a/k.pub",
      "secret/k.pub",
      "secret/a/k",
      "x.bak",
      "A.txt",
      "b.txt",
    ];
    expect(files.flatMap((text) => differences(text, paths))).toEqual([]);
  });

  it("generated lines over gitignore's alphabet agree with the package (seeded)", () => {
    // A small linear congruential generator: the same 1,000 lines every run.
    let seed = 24;
    const next = (bound: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % bound;
    };
    const pieces = ["a", "b", "/", "*", "**", "?", "[ab]", "[!a]", "\\*", ".", "!", " ", "x/"];
    const paths = ["a", "b", "a/b", "ab", "b/a/", "a/a/b", "x/a", "x/b/", "a*", "a/x/b/a", "ba", ".a", "a b"];
    const found: string[] = [];
    for (let count = 0; count < 1_000; count++) {
      let line = "";
      const length = 1 + next(6);
      for (let piece = 0; piece < length; piece++) line += pieces[next(pieces.length)];
      found.push(...differences(line, paths));
    }
    expect(found.slice(0, 20)).toEqual([]);
  });

  it("case: insensitive by default, sensitive when asked", () => {
    expect(linearIgnore().add("*.TXT").ignores("a.txt")).toBe(true);
    expect(linearIgnore({ ignoreCase: false }).add("*.TXT").ignores("a.txt")).toBe(false);
    expect(linearIgnore({ ignoreCase: false }).add("*.TXT").ignores("a.TXT")).toBe(true);
  });

  it("lines that are no rule, and lines that can match nothing, compile to nothing", () => {
    for (const line of ["", "#x", "!", "   ", "x\\", "[abc", "[[:nope:]]", "[/]", "x\\/"])
      expect(compileGitignoreLine(line), line).toBeUndefined();
  });

  it("more lines than one RE2 set holds: the last matching line still decides", () => {
    const lines = Array.from({ length: 600 }, (_, index) => `file${index}`);
    const linear = linearIgnore().add([...lines, "!file3", "*.x", "!keep.x"]);
    expect(linear.ignores("file599")).toBe(true);
    expect(linear.ignores("file3")).toBe(false);
    expect(linear.test("file3").unignored).toBe(true);
    expect(linear.ignores("a.x")).toBe(true);
    expect(linear.ignores("keep.x")).toBe(false);
  });
});
