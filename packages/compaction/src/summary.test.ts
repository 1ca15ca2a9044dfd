import { describe, expect, it } from "vitest";
import {
  buildCompactInstruction,
  extractSummary,
  findActiveTask,
  SUMMARY_SECTIONS,
  truncateToTokens,
  validateSummary,
} from "./summary.js";
import { createHistory } from "./testing/index.js";

const TASK = "Migrate the billing module to the new invoice schema without changing the public API";

describe("summary rules", () => {
  it("R-C4: the compact instruction asks for every section, and carries /compact instructions", () => {
    const instruction = buildCompactInstruction("focus on the database changes");
    for (const section of SUMMARY_SECTIONS) expect(instruction).toContain(section);
    expect(instruction).toContain("focus on the database changes");
  });

  it.each([
    [
      "keeps the task and is small",
      `Goal: migrate billing module to new invoice schema; public API unchanged.`,
      true,
    ],
    ["is empty", "   ", false],
    ["is larger than what it replaces", `${TASK} ${"padding ".repeat(400)}`, false],
    ["dropped the active task", "We looked at some files and fixed a typo.", false],
  ])("R-C4: a summary that %s → ok=%s", (_name, summary, ok) => {
    expect(validateSummary(summary, { tokens: 200 }, TASK).ok).toBe(ok);
  });

  it("R-C4: the active task is the newest human request, else the one pinned in the latest summary", () => {
    const history = createHistory();
    history.user("old request");
    history.answer("done");
    history.user(TASK);
    history.toolCall("Read", { file_path: "/b.ts" }, "x");
    expect(findActiveTask(history.messages)).toBe(TASK);
    const summaryOnly = [
      {
        type: "user" as const,
        uuid: "s",
        parentUuid: null,
        timestamp: "",
        isMeta: true,
        message: {
          role: "user" as const,
          content: `<summary>x</summary>\n<active-task>\n${TASK}\n</active-task>`,
        },
      },
      ...history.messages.slice(-2),
    ];
    expect(findActiveTask(summaryOnly)).toBe(TASK);
  });

  it("extracts the summary from tags and truncates to a token budget", () => {
    expect(extractSummary("<analysis>thinking</analysis><summary>\nS\n</summary>")).toBe("S");
    expect(extractSummary("<analysis>thinking</analysis>plain")).toBe("plain");
    const long = "word ".repeat(1_000);
    expect(truncateToTokens(long, 100).length).toBeLessThan(long.length);
  });
});
