import { describe, expect, it } from "vitest";
import { toolActivity } from "./tool-activity.js";

describe("R-K2: a sub-agent's activity in Claude Code's words (task_progress descriptions)", () => {
  it("R-K2: each tool's activity names what it works on — a file relative to the working directory, a command, a pattern — else the tool's generic words", () => {
    const cwd = "/work/project";
    expect(toolActivity("Read", { file_path: "/work/project/notes.txt" }, cwd)).toBe("Reading notes.txt");
    expect(toolActivity("Read", { file_path: "/elsewhere/a.txt" }, cwd)).toBe("Reading /elsewhere/a.txt");
    expect(toolActivity("Read", {}, cwd)).toBe("Reading file");
    expect(toolActivity("Write", { file_path: "/work/project/src/a.ts" }, cwd)).toBe("Writing src/a.ts");
    expect(toolActivity("Edit", { file_path: "b.ts" }, cwd)).toBe("Editing b.ts");
    expect(toolActivity("Bash", { command: "npm test", description: "Run the tests" }, cwd)).toBe(
      "Running Run the tests",
    );
    expect(toolActivity("Bash", { command: "npm test" }, cwd)).toBe("Running npm test");
    expect(toolActivity("Bash", {}, cwd)).toBe("Running command");
    expect(toolActivity("Glob", { pattern: "**/*.ts" }, cwd)).toBe("Finding **/*.ts");
    expect(toolActivity("Grep", { pattern: "TODO" }, cwd)).toBe("Searching for TODO");
    expect(toolActivity("WebFetch", { url: "https://example.com" }, cwd)).toBe(
      "Fetching https://example.com",
    );
    expect(toolActivity("Agent", { description: "Proofread  notes" }, cwd)).toBe("Proofread notes");
    expect(toolActivity("mcp__calc__add", { a: 1 }, cwd)).toBeUndefined();
  });
});
