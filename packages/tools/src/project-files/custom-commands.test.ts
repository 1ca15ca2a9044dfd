import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { useTempWorkspace } from "../testing/index.js";
import { customCommandPrompt, findCustomCommand } from "./custom-commands.js";

const ws = useTempWorkspace();
function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

describe("R-X1: custom slash commands as Claude Code reads them", () => {
  it("R-X1: project commands (inner directories and .forkloop win) before the user's; /dir:name is a subdirectory", () => {
    const root = join(ws.root, "repo");
    const inner = join(root, "pkg");
    const home = join(ws.root, "home");
    put(join(home, ".claude/commands/greet.md"), "user greet");
    put(join(home, ".claude/commands/only-user.md"), "user only");
    put(join(root, ".claude/commands/greet.md"), "outer greet");
    put(join(inner, ".claude/commands/greet.md"), "inner claude greet");
    put(join(inner, ".forkloop/commands/greet.md"), "inner forkloop greet");
    put(join(root, ".claude/commands/git/commit.md"), "commit");
    const find = (name: string) => findCustomCommand(name, { projectDirs: [root, inner], home });
    const body = (name: string) => {
      const found = find(name);
      return found.status === "found" ? `${found.command.scope}: ${found.command.body}` : found.status;
    };
    expect(body("greet")).toBe("project: inner forkloop greet");
    expect(body("only-user")).toBe("user: user only");
    expect(body("git:commit")).toBe("project: commit");
    expect(body("nope")).toBe("missing");
    expect(body("../escape")).toBe("missing");
  });

  it("R-X1: frontmatter allowed-tools (a string, an inline list, a list) and model; the prompt's tags and arguments", () => {
    const dir = join(ws.root, "p");
    put(
      join(dir, ".claude/commands/a.md"),
      "---\nallowed-tools: Bash(git add:*), Bash(git status:*), Read\nmodel: haiku\n---\nDo $0 then $1 ($ARGUMENTS), not $5.\n",
    );
    put(join(dir, ".claude/commands/b.md"), "---\nallowed-tools: [Read, Grep]\n---\nPlain.\n");
    put(join(dir, ".claude/commands/c.md"), "---\nallowed-tools:\n  - Edit\n  - 'Write(src/**)'\n---\nx\n");
    const command = (name: string) => {
      const found = findCustomCommand(name, { projectDirs: [dir] });
      if (found.status !== "found") throw new Error(found.status);
      return found.command;
    };
    expect(command("a")).toMatchObject({
      allowedTools: ["Bash(git add:*)", "Bash(git status:*)", "Read"],
      model: "haiku",
    });
    expect(command("b").allowedTools).toEqual(["Read", "Grep"]);
    expect(command("c").allowedTools).toEqual(["Edit", "Write(src/**)"]);
    expect(customCommandPrompt(command("a"), "build test")).toBe(
      "<command-message>a</command-message>\n<command-name>/a</command-name>\n<command-args>build test</command-args>\n\nDo build then test (build test), not $5.\n",
    );
    expect(customCommandPrompt(command("b"), "extra words")).toContain("Plain.\n\nARGUMENTS: extra words\n");
    expect(customCommandPrompt(command("b"), "")).not.toContain("ARGUMENTS");
  });
});
