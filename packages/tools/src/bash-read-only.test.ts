import { describe, expect, it } from "vitest";
import { isReadOnlyCommand } from "./bash-read-only.js";

describe("R-P1: Bash read-only classification (plan mode allows only these)", () => {
  it.each([
    "ls -la",
    "cat README.md | head -20",
    "git log --oneline -5",
    "git diff HEAD~1 && git status",
    "grep -rn 'foo$' src; wc -l src/*.ts",
    "find . -name '*.ts' -type f",
  ])("R-P1: read-only: %s", (command) => {
    expect(isReadOnlyCommand(command)).toBe(true);
  });

  it.each([
    "rm -rf /",
    "echo hi > file",
    "cat a >> b",
    "ls $(rm -rf x)",
    "ls `touch x`",
    "find . -delete",
    "find . -exec rm {} ;",
    "git commit -m x",
    "git push",
    "sort -o out in",
    "FOO=1 ls",
    "ls & rm x",
    "npm test",
    "ls\nrm x",
    'echo "$HOME"',
    "",
  ])("R-P1: not read-only: %j", (command) => {
    expect(isReadOnlyCommand(command)).toBe(false);
  });
});
