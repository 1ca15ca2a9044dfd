import { describe, expect, it } from "vitest";
import { memoryImports } from "./memory-imports.js";

describe("memory imports (Claude Code's @path syntax)", () => {
  it("R-S8: finds relative, absolute and home paths; not code, e-mail addresses or mentions", () => {
    const text = [
      "See @docs/style.md and @./local.md, then @../shared/rules.md.",
      "Absolute: @/etc/rules.md; home: @~/notes/me.md",
      "Mail me at me@example.com, ask @alice.",
      "Inline `@not/an-import.md` stays code.",
      "```",
      "@decorator/in/code.md",
      "```",
      "Escaped space: @docs/my\\ file.md",
    ].join("\n");
    expect(memoryImports(text, "/repo/pkg/CLAUDE.md", "/home/me")).toEqual([
      "/repo/pkg/docs/style.md",
      "/repo/pkg/local.md",
      "/repo/shared/rules.md",
      "/etc/rules.md",
      "/home/me/notes/me.md",
      "/repo/pkg/docs/my file.md",
    ]);
  });
});
