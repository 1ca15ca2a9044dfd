import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useTempWorkspace } from "../testing/index.js";
import { gitConfigEntries, gitConfigIncludes, lastGitConfigValue } from "./git-config-values.js";

const ws = useTempWorkspace();

/** Config texts and the core.hooksPath git itself reads from them (checked against real git below). */
const CASES: readonly (readonly [name: string, text: string, hooksPath: string | undefined])[] = [
  ["plain", "[core]\n\thooksPath = .githooks\n", ".githooks"],
  ["case-insensitive section and key", "[CORE]\n\tHOOKSPATH = hooks\n", "hooks"],
  ["the last one wins", "[core]\n\thooksPath = a\n[core]\n\thooksPath = b\n", "b"],
  ["quoted, with a comment after", '[core]\n\thooksPath = "my hooks" # where\n', "my hooks"],
  ["; inside quotes is kept", '[core]\n\thooksPath = "a;b"\n', "a;b"],
  ["continued line", "[core]\n\thooksPath = a\\\nb\n", "ab"],
  ["escapes", '[core]\n\thooksPath = "a\\"b\\\\c"\n', 'a"b\\c'],
  ["inline after the header", "[core] hooksPath = inline\n", "inline"],
  ["a commented-out key", "[core]\n#\thooksPath = no\n\t; hooksPath = no\n", undefined],
  ["another section's key", '[alias "core"]\n\thooksPath = no\n', undefined],
];

describe("R-S9: git config read without git", () => {
  for (const [name, text, hooksPath] of CASES) {
    it(`R-S9: core.hooksPath — ${name} (as git reads it)`, () => {
      expect(lastGitConfigValue(gitConfigEntries(text), "core.hooksPath")).toBe(hooksPath);
      const file = join(ws.root, "config");
      writeFileSync(file, text);
      let fromGit: string | undefined;
      try {
        fromGit = execFileSync("git", ["config", "--file", file, "--get", "core.hooksPath"], {
          encoding: "utf8",
        });
      } catch {
        fromGit = undefined;
      }
      expect(fromGit?.replace(/\n$/, "")).toBe(hooksPath);
    });
  }

  it("R-S9: include.path and includeIf.*.path are the files a config brings in", () => {
    const text =
      '[include]\n\tpath = ../shared\n[includeIf "gitdir:~/work/"]\n\tpath = ~/work.gitconfig\n[user]\n\tpath = no\n';
    expect(gitConfigIncludes(gitConfigEntries(text))).toEqual(["../shared", "~/work.gitconfig"]);
  });
});
