import { describe, expect, it } from "vitest";
import { splitRules, toolListSchema } from "./agent-options.js";

describe("tool rule flags", () => {
  it("splits at commas and spaces outside parentheses, keeping a rule's own spaces", () => {
    expect(splitRules("Read, Bash(npm test:*),Edit(src/**) Write")).toEqual([
      "Read",
      "Bash(npm test:*)",
      "Edit(src/**)",
      "Write",
    ]);
  });

  it("validates tool names and rule syntax", () => {
    expect(toolListSchema.safeParse("Bash(git status),Read").success).toBe(true);
    expect(toolListSchema.safeParse("Grpe").error?.issues[0]?.message).toMatch(
      /unknown tool "Grpe" \(did you mean Grep\?\)/,
    );
  });
});
