import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { withExtraArgs } from "./extra-args.js";
import { OptionsError } from "./options-error.js";

describe("R-K2: extraArgs read as Claude Code's CLI flags", () => {
  it("R-K2: --json-schema, --max-turns, --mcp-config, --setting-sources, --allowedTools become the options they stand for; a flag wins over its option", () => {
    const schema = { type: "object", properties: { verdict: { type: "string" } } };
    const options = withExtraArgs({
      maxTurns: 9,
      mcpConfig: ["a.json"],
      allowedTools: ["Read"],
      extraArgs: {
        "json-schema": JSON.stringify(schema),
        "max-turns": "3",
        "--mcp-config": "b.json",
        "setting-sources": "user, project",
        allowedTools: "Bash(git diff:*) Write,Edit",
        "strict-mcp-config": null,
      },
    });
    expect(options).toEqual({
      maxTurns: 3,
      // A flag's path is relative to the query's cwd; the schema is sent as `forkloop run
      // --json-schema` sends it (apiOutputSchema), through the one mapping.
      mcpConfig: ["a.json", resolve("b.json")],
      allowedTools: ["Read", "Bash(git diff:*)", "Write", "Edit"],
      outputFormat: { type: "json_schema", schema: { ...schema, additionalProperties: false } },
      settingSources: ["user", "project"],
      strictMcpConfig: true,
    });
  });

  it("R-K2: a flag forkloop does not read is an error naming it (never silently dropped); so is a bad value", () => {
    expect(() => withExtraArgs({ extraArgs: { "sdk-url": "ws://x", debug: null } })).toThrow(
      /extraArgs: forkloop does not support --sdk-url, --debug; the flags it reads are --json-schema, /,
    );
    expect(() => withExtraArgs({ extraArgs: { "max-turns": "two" } })).toThrow(OptionsError);
    expect(() => withExtraArgs({ extraArgs: { "json-schema": "{[1]" } })).toThrow(
      /--json-schema: not valid JSON/,
    );
    expect(withExtraArgs({ model: "m" })).toEqual({ model: "m" });
  });

  it("R-K2, R-C7: --autocompact is the autoCompactWindow option, read as Claude Code reads it (500k, 1.5m, 200 as 200k; auto is no cap); under 100k is refused", () => {
    const window = (value: string) => withExtraArgs({ extraArgs: { autocompact: value } }).autoCompactWindow;
    expect(window("150000")).toBe(150_000);
    expect(window("500k")).toBe(500_000);
    expect(window("1.5m")).toBe(1_500_000);
    expect(window("200")).toBe(200_000);
    expect(window("auto")).toBeUndefined();
    for (const bad of ["5000", "99", "0", "-1", "lots"]) {
      expect(() => window(bad)).toThrow(/--autocompact: .* It must be 'auto', or at least 100k/);
    }
  });

  it("R-K2: --agent and --no-session-persistence become the agent and persistSession options", () => {
    expect(withExtraArgs({ extraArgs: { agent: "reviewer", "--no-session-persistence": null } })).toEqual({
      agent: "reviewer",
      persistSession: false,
    });
  });
});
