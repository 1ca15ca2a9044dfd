import { truncate } from "./compaction-summary.js";

/** A summary derived from the content: line count, first heading or comment, top identifiers. */
export function describeContent(subject: string, raw: string): string {
  // Read output is `cat -n` style ("  12\tcode"): drop the line numbers.
  const lines = raw.split("\n").map((line) => line.replace(/^\s*\d+\t/, ""));
  while (lines.length > 0 && lines.at(-1) === "") lines.pop();
  const heading = firstHeadingOrComment(lines);
  const exported = uniqueMatches(
    lines,
    /^export\s+(?:default\s+)?(?:async\s+)?(?:function\*?|class|const|let|var|interface|type|enum)\s+([A-Za-z_$][\w$]*)/,
  );
  const defined =
    exported.length > 0
      ? exported
      : uniqueMatches(lines, /^\s*(?:def|class|function|fn|func|pub fn|struct|interface)\s+([A-Za-z_][\w]*)/);
  const imports = lines.filter((l) =>
    /^\s*(?:import\s|from\s+\S+\s+import\s|use\s+\w|#include\s)/.test(l),
  ).length;
  const sentences = [
    `Summary of ${subject}: ${lines.length} lines${imports > 0 ? `, ${imports} imports` : ""}.`,
  ];
  if (heading) sentences.push(`First heading/comment: "${truncate(heading, 100)}".`);
  if (defined.length > 0) {
    const label = exported.length > 0 ? "Exported names" : "Defined names";
    sentences.push(`${label}: ${defined.slice(0, 8).join(", ")}${defined.length > 8 ? ", …" : ""}.`);
  } else {
    const words = topWords(lines.join(" "));
    if (words.length > 0) sentences.push(`Most frequent words: ${words.join(", ")}.`);
  }
  return sentences.join(" ");
}

const COMMENT_START = /^(?:#{1,6}\s|\/\/|\/\*|\*|--\s|"""|<!--)/;

/** The text of the first heading or comment, skipping lines that are only comment punctuation. */
function firstHeadingOrComment(lines: readonly string[]): string | null {
  const start = lines.findIndex((l) => COMMENT_START.test(l.trim()));
  if (start < 0) return null;
  for (const line of lines.slice(start, start + 5)) {
    const trimmed = line.trim();
    if (!COMMENT_START.test(trimmed)) break;
    const text = trimmed
      .replace(/^(?:#{1,6}|\/\/+|\/\*+|\*+|--|"""|<!--)\s*/, "")
      .replace(/\s*(?:\*\/|-->|""")$/, "")
      .trim();
    if (/[A-Za-z0-9]/.test(text)) return trimmed.startsWith("#") ? trimmed : text;
  }
  return null;
}

function uniqueMatches(lines: readonly string[], pattern: RegExp): string[] {
  const names: string[] = [];
  for (const line of lines) {
    const name = pattern.exec(line)?.[1];
    if (name && !names.includes(name)) names.push(name);
  }
  return names;
}

function topWords(text: string): string[] {
  const counts = new Map<string, number>();
  for (const word of text.toLowerCase().match(/[a-z_][a-z0-9_]{3,}/g) ?? []) {
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, 5)
    .map(([w]) => w);
}
