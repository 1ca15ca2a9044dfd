import { describe, expect, it } from "vitest";
import { selectTools } from "./tool-selection.js";

describe("tool selection", () => {
  it("a bare deny rule removes the tool; a pattern rule keeps it (it only denies matching calls)", () => {
    const names = (deny: string[]) => selectTools(deny).map((tool) => tool.name);
    expect(names(["Bash"])).not.toContain("Bash");
    expect(names(["Bash(rm:*)"])).toContain("Bash");
  });
});
