import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { globScope } from "./glob-scope.js";
import { compileGlob, compileGlobs } from "./linear-glob.js";

const GLOBS = [
  "*.ts",
  "**/*.ts",
  "src/**/*.ts",
  "a/**",
  "**/x",
  "a/**/b",
  "*.{ts,js}",
  "{a,b}/{c,d}",
  "[abc]x",
  "[a-c]x",
  "?x",
  "a?c",
  "@(a|b)",
  "+(a)",
  "*(a|b)c",
  "?(a)b",
  "(a|b)",
  "{1..3}",
  "{a..c}",
  "a**b",
  "**a",
  "\\*",
  "[[:alpha:]]",
  "**",
  "*",
  "src/*",
  ".*",
  "**/.git/**",
  "a{b,c/d}",
  "{a}",
  "{a,}",
  "x/*/y",
  "**/*.{md,txt}",
  "a.b",
  "a+b",
  "$x",
  "[]a]",
  "[a-]",
  "!*.md",
];
const PATHS = [
  "x.ts",
  "a/x.ts",
  "src/a/b/x.ts",
  "src/x.ts",
  "a",
  "a/b/c",
  "x",
  "a/b/x",
  "a/b",
  "x.js",
  "a/c",
  "b/d",
  "ax",
  "bx",
  "dx",
  "b",
  "1",
  "2",
  "1..3",
  "c",
  "axyb",
  "ax/yb",
  "x/ya",
  "ya",
  "*",
  "q",
  ".hidden",
  "src",
  ".git/x",
  "ac/d",
  "{a}",
  "aaa",
  "abc",
  "ab",
  ".x/y",
  "x/y/z/y",
  "x/z/y",
  "a.md",
  "b.txt",
  "a+b",
  "$x",
  "a.b",
  "axb",
  "-",
  "x.md",
];

describe("R-S12: globs compiled to RE2 match as picomatch did", () => {
  it("every glob × path of the table gives picomatch's answer (dot: true)", () => {
    const differences: string[] = [];
    for (const glob of GLOBS) {
      const compiled = compileGlob(glob);
      if (!compiled.ok) throw new Error(compiled.error);
      const reference = picomatch(glob, { dot: true });
      for (const path of PATHS)
        if (compiled.glob.matches(path) !== reference(path)) differences.push(`${glob} ${path}`);
    }
    expect(differences).toEqual([]);
  });

  it("where it knowingly differs: [!a] is bash's and gitignore's class, not picomatch's negation", () => {
    const compiled = compileGlob("[!a]");
    if (!compiled.ok) throw new Error(compiled.error);
    expect(["a", "b"].map((path) => compiled.glob.matches(path))).toEqual([false, true]);
    expect(picomatch("[!a]", { dot: true })("b")).toBe(false);
  });

  it("basename globs match the last segment; a list matches when any glob does", () => {
    const list = compileGlobs(["*.md", "dist"], { basename: true });
    if (!list.ok) throw new Error(list.error);
    expect(["a/b/x.md", "a/dist", "a/src", "x/a.md/y"].map((path) => list.glob.matches(path))).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it("the walk starts at the literal directories and stops at the depth a match can have", () => {
    expect(globScope("src/lib/*.ts")).toEqual({ base: "src/lib", maxDepth: 1 });
    expect(globScope("src/*/x/*.ts")).toEqual({ base: "src", maxDepth: 3 });
    expect(globScope("src/**/*.ts")).toEqual({ base: "src", maxDepth: Number.POSITIVE_INFINITY });
    expect(globScope("*.{ts,js}")).toEqual({ base: "", maxDepth: 1 });
    expect(globScope("{a/b,c}/*")).toEqual({ base: "", maxDepth: Number.POSITIVE_INFINITY });
    expect(globScope("README.md")).toEqual({ base: "", maxDepth: 1 });
  });
});
