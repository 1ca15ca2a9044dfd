import { describe, expect, it } from "vitest";
import { parseRunFlags } from "./run-flags.js";

// R-X3: Claude Code's `--allowedTools <tools...>` and `--disallowedTools <tools...>` take several
// values after one flag (the claude-cli harness's bash-background-stop scenario passes two);
// node's parseArgs takes one, and the rest silently became the prompt.
describe("R-X3: --allowedTools / --disallowedTools <tools...> as Claude Code takes them", () => {
  it.each([
    [["-p", "Start it.", "--allowedTools", "Bash", "TaskStop"], ["Bash", "TaskStop"], ["Start it."]],
    [
      ["-p", "--allowed-tools", "Read", "Bash(git log:*)", "Fix it."],
      ["Read", "Bash(git log:*)"],
      ["Fix it."],
    ],
    [["-p", "--allowed-tools=Read,Grep", "mcp__db", "Fix it."], ["Read", "Grep", "mcp__db"], ["Fix it."]],
    // The flag's own value is whatever follows it; a prompt after the list stays the prompt.
    [["-p", "--allowedTools", "Bash", "fix the build"], ["Bash"], ["fix the build"]],
    [["-p", "--allowedTools", "Bash", "--", "Read"], ["Bash"], ["Read"]],
  ])("%j", (argv, rules, positionals) => {
    const parsed = parseRunFlags(argv);
    expect(parsed.flags["allowed-tools"]).toEqual(rules);
    expect(parsed.positionals).toEqual(positionals);
  });

  it("R-X3: --disallowedTools Bash Agent removes both", () => {
    const parsed = parseRunFlags(["-p", "Say hi.", "--disallowedTools", "Bash", "Agent"]);
    expect(parsed.flags["disallowed-tools"]).toEqual(["Bash", "Agent"]);
    expect(parsed.positionals).toEqual(["Say hi."]);
  });
});
