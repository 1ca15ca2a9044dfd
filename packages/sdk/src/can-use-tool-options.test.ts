import { describe, expect, it } from "vitest";
import { canUseToolOptions } from "./can-use-tool-options.js";

const asked = (extra: Partial<Parameters<typeof canUseToolOptions>[2]> = {}) => ({
  signal: new AbortController().signal,
  toolUseId: "toolu_1",
  agentId: "main",
  mode: "default",
  cwd: "/work",
  ...extra,
});

describe("R-K2: canUseTool gets the Agent SDK's options", () => {
  it("R-K2: a Bash call: the rule that would allow it as Claude Code writes it, its description, a request id", () => {
    const options = canUseToolOptions(
      "Bash",
      { command: "npm test", description: "Run the tests" },
      asked({ suggestedRule: "Bash(npm test:*)", reason: "This Bash command needs approval" }),
    );
    expect(options).toMatchObject({
      suggestions: [
        {
          type: "addRules",
          rules: [{ toolName: "Bash", ruleContent: "npm test *" }],
          behavior: "allow",
          destination: "localSettings",
        },
      ],
      decisionReason: "This Bash command needs approval",
      displayName: "Bash",
      description: "Run the tests",
      toolUseID: "toolu_1",
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(options).not.toHaveProperty("agentID");
  });

  it("R-K2: a file edit in default mode suggests accepting edits for the session; its file, relative; a sub-agent's id", () => {
    const options = canUseToolOptions(
      "Write",
      { file_path: "/work/notes/copy.txt", content: "x" },
      asked({ agentId: "agent-1" }),
    );
    expect(options.suggestions).toEqual([{ type: "setMode", mode: "acceptEdits", destination: "session" }]);
    expect(options).toMatchObject({
      description: "notes/copy.txt",
      agentID: "agent-1",
      displayName: "Write",
    });
    expect(canUseToolOptions("mcp__w__t", {}, asked()).suggestions).toEqual([
      {
        type: "addRules",
        rules: [{ toolName: "mcp__w__t" }],
        behavior: "allow",
        destination: "localSettings",
      },
    ]);
  });
});
