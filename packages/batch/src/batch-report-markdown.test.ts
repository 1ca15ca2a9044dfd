import { describe, expect, it } from "vitest";
import { buildReport } from "./batch-report.js";
import { escapeInline, fenced, formatReportMarkdown } from "./batch-report-markdown.js";
import type { ItemState } from "./job-backend.js";

const usage = {
  inputTokens: 10,
  outputTokens: 5,
  cacheCreationInputTokens: 100,
  cacheReadInputTokens: 900,
  apiCalls: 2,
};
const state = (id: string, label: string, text: string): ItemState => ({
  item: { id, label, prompt: `Summarize ${label}` },
  status: "succeeded",
  attempts: 1,
  result: { turns: 2, usage, costUsd: 0.0123, durationMs: 1500, text },
});

describe("report.md holds the answers, escaped", () => {
  it("one row per item with every metric, then each whole answer in a fence longer than its own", () => {
    const hostile = "Done.\n```\n| injected | row |\n```\n<img src=x onerror=alert(1)>";
    const report = buildReport(
      "b1",
      [state("i1", "src/a|b.ts", hostile), state("i2", "<script>.ts", "fine")],
      2000,
      { simulated: true, transcriptsDir: "/state/b1/transcripts" },
    );
    const markdown = formatReportMarkdown(report);
    const rows = markdown.split("\n").filter((line) => line.startsWith("| 1 |") || line.startsWith("| 2 |"));
    expect(rows[0]).toBe(
      "| 1 | src/a\\|b.ts | succeeded | 2 | 1.0k / 5 | 900 | 100 | 0 | $0.0123 | 2s | 0 | Done. / \\`\\`\\` |",
    );
    // Every row keeps its 12 cells: no `|` of a label or an answer splits one.
    for (const row of rows) expect(row.split(/(?<!\\)\|/).length).toBe(14);
    expect(markdown).toContain("### 2. &lt;script&gt;.ts — succeeded");
    expect(markdown).toContain(`\`\`\`\`text\n${hostile}\n\`\`\`\``);
    expect(markdown).toContain("Transcript: /state/b1/transcripts/i1-1.fltr");
    expect(markdown).toContain("cost $0.0246 (simulated)");
    // Outside the code fences (where markdown renders) nothing of the answer's HTML is left.
    expect(markdown.replace(/````text\n[\s\S]*?\n````/g, "")).not.toContain("<img");
  });

  it("escapeInline and fenced", () => {
    expect(escapeInline("a|b <i>*x*</i> & `c` #1 [l](u)")).toBe(
      "a\\|b &lt;i&gt;\\*x\\*&lt;/i&gt; &amp; \\`c\\` \\#1 \\[l\\](u)",
    );
    expect(fenced("no ticks")).toEqual(["```text", "no ticks", "```"]);
    expect(fenced("a ````` b")[0]).toBe("``````text");
  });
});
