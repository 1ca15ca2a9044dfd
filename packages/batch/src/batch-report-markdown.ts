import {
  type BatchReport,
  compactionsCell,
  formatTotals,
  type ResultLine,
  tokensCell,
} from "./batch-report.js";
import { formatCount, formatDuration } from "./progress-display.js";

/**
 * `report.md`: what the batch was for — every item's answer — next to its metrics.
 * Labels (file names) and answers (model output) are hostile input: inline text is escaped
 * so a `|` cannot break the table and markup cannot render, and each full answer sits in a code
 * fence longer than any backtick run inside it.
 */
export function formatReportMarkdown(report: BatchReport): string {
  const lines = [
    `# Batch ${escapeInline(report.batchId)}`,
    "",
    ...formatTotals(report)
      .split("\n")
      .map((line) => `${escapeInline(line)}  `),
    ...reduceSection(report),
    "",
    "| # | item | status | turns | tokens in / out | cache reads | cache writes | compactions | cost | duration | retries | answer |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...report.items.map((line, index) =>
      tableRow([
        String(index + 1),
        line.label,
        line.status,
        String(line.turns),
        tokensCell(line.usage),
        formatCount(line.usage.cacheReadInputTokens),
        formatCount(line.usage.cacheCreationInputTokens),
        compactionsCell(line.compactions),
        `$${line.costUsd.toFixed(4)}${line.onlineCostUsd === undefined ? "" : ` (online $${line.onlineCostUsd.toFixed(4)})`}`,
        formatDuration(line.durationMs),
        String(line.apiRetries),
        firstLines(answerOf(line)),
      ]),
    ),
    ...repeatedSideEffects(report.items),
    ...conflicts(report.items),
    "",
    "## Answers",
    ...report.items.flatMap((line, index) => answerSection(line, index + 1)),
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * Items redone from scratch after an attempt was interrupted once a mutating tool had
 * begun — its edits or commands may have happened twice; listed so someone can check them.
 */
function repeatedSideEffects(items: readonly ResultLine[]): string[] {
  const repeated = items.filter((line) => line.mayHaveRunTwice.length > 0);
  if (repeated.length === 0) return [];
  return [
    "",
    "## May have run twice",
    "",
    "These items were interrupted after a tool that changes things had started, and were redone",
    "from scratch; check that their side effects are not doubled.",
    "",
    ...repeated.map(
      (line) =>
        `- ${escapeInline(line.label)}: ${line.mayHaveRunTwice.map((repeat) => `attempt ${repeat.attempt} (${escapeInline(repeat.tool)})`).join(", ")}`,
    ),
  ];
}

/** R-B7: the reduce's answer, the batch's result, before the items it was made from. */
function reduceSection(report: BatchReport): string[] {
  const reduce = report.reduce;
  if (reduce === undefined) return [];
  const section = [
    "",
    `## Result (reduce: ${reduce.status}, over ${reduce.items} item${reduce.items === 1 ? "" : "s"})`,
    "",
    `Prompt: ${escapeInline(reduce.prompt)}`,
    "",
  ];
  if (reduce.error !== null)
    section.push(`Error: ${escapeInline(`${reduce.error.code}: ${reduce.error.message}`)}`, "");
  if (reduce.text !== null && reduce.text !== "") section.push(...fenced(reduce.text), "");
  else if (reduce.error === null) section.push("_(not finished: `--resume` runs it)_", "");
  section.push(
    `${reduce.turns} turn${reduce.turns === 1 ? "" : "s"} · tokens ${tokensCell(reduce.usage)} · cache reads ${formatCount(reduce.usage.cacheReadInputTokens)} · cost $${reduce.costUsd.toFixed(4)}`,
  );
  if (reduce.transcript !== null) section.push(`Transcript: ${escapeInline(reduce.transcript)}`);
  return section;
}

/** R-B4: items whose change could not be merged: the paths and why, and where the diff is kept. */
function conflicts(items: readonly ResultLine[]): string[] {
  const kept = items.filter((line) => line.error?.conflict !== undefined);
  if (kept.length === 0) return [];
  return [
    "",
    "## Conflicts",
    "",
    "These items succeeded in their own copy of the project, but their change could not be merged",
    "into it; nothing of it was applied. Each diff is kept (`git apply --3way PATCH`).",
    "",
    ...kept.map((line) => {
      const conflict = line.error!.conflict!;
      const files = conflict.files.map((file) => `${escapeInline(file.path)} (${escapeInline(file.reason)})`);
      return `- ${escapeInline(line.label)}: ${files.join(", ")} — diff: ${escapeInline(conflict.patch)}${conflict.workspace === undefined ? "" : `, copy: ${escapeInline(conflict.workspace)}`}`;
    }),
  ];
}

function answerSection(line: ResultLine, number: number): string[] {
  const section = ["", `### ${number}. ${escapeInline(line.label)} — ${line.status}`, ""];
  if (line.error !== null)
    section.push(`Error: ${escapeInline(`${line.error.code}: ${line.error.message}`)}`, "");
  if (line.text !== null && line.text !== "") section.push(...fenced(line.text), "");
  else if (line.error === null) section.push("_(no answer yet)_", "");
  if (line.transcript !== null) section.push(`Transcript: ${escapeInline(line.transcript)}`);
  return section;
}

/** The answer, or the error when there is none. */
function answerOf(line: ResultLine): string {
  if (line.text !== null && line.text !== "") return line.text;
  return line.error === null ? "" : `${line.error.code}: ${line.error.message}`;
}

/** The first two non-empty lines, at most 160 characters, for the table. */
function firstLines(text: string): string {
  const kept = text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .slice(0, 2)
    .join(" / ");
  return kept.length > 160 ? `${kept.slice(0, 159)}…` : kept;
}

function tableRow(cells: readonly string[]): string {
  return `| ${cells.map((cell) => escapeInline(cell).replaceAll("\n", " ")).join(" | ")} |`;
}

/** Markdown inline text: HTML disarmed, punctuation that starts markup or splits a table escaped. */
export function escapeInline(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replace(/[\\`*_[\]|#~]/g, (char) => `\\${char}`)
    .replaceAll("\r", "")
    .replaceAll("\n", " ");
}

/** A code fence around text that may itself hold fences: one backtick longer than its longest run. */
export function fenced(text: string): string[] {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return [`${fence}text`, text.replace(/\r/g, ""), fence];
}
