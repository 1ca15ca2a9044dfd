import { blocksOf } from "../conversation-turns.js";
import type { MessagesRequest } from "../request-schema.js";
import type { BrainReply, BrainRequest } from "../types.js";
import { compactionSummary, truncate } from "./compaction-summary.js";

/** Every reply says what produced it: the simulator never pretends to be a model (SPEC §0). */
const SIGNATURE = "forkloop simulator, built-in policy — not a language model";

/**
 * The deterministic built-in policy that drives the CLI demo (issue 2 point 9b):
 * - a compaction request gets a structured summary that carries facts over;
 * - a prompt naming a file, with a read tool available and no tool result yet, reads the file;
 * - a tool result gets a summary derived from its content;
 * - anything else gets a short deterministic answer.
 */
export function builtinPolicyBrain(request: BrainRequest): BrainReply {
  if (isCompactionRequest(request)) return compactionSummary(request, SIGNATURE);
  const results = request.lastToolResults;
  if (results.length > 0) return summariseToolResults(request);
  const path = pathInLastUserText(request);
  const read = path && !hasAnyToolResult(request.body) ? findReadTool(request.body) : null;
  if (path && read) {
    return {
      content: [
        { type: "text", text: `(${SIGNATURE}) I will read ${path} with the ${read.name} tool.` },
        { type: "tool_use", name: read.name, input: { [read.field]: path } },
      ],
    };
  }
  const said = request.lastUserText?.trim() ?? "";
  const words = said === "" ? 0 : said.split(/\s+/).length;
  const quote = said.length > 80 ? `${said.slice(0, 77)}...` : said;
  return {
    content: [{ type: "text", text: `(${SIGNATURE}) Received a message of ${words} words: "${quote}".` }],
  };
}

function isCompactionRequest(request: BrainRequest): boolean {
  if (request.querySource === "compact") return true;
  const text = request.lastUserText ?? "";
  return /summar(?:y|ise|ize)[^.\n]{0,80}conversation|conversation[^.\n]{0,80}summar/i.test(text);
}

/**
 * The path named by the last user message, looking at its text blocks from the last one back
 * (clients put reminders and context before the actual prompt).
 */
function pathInLastUserText(request: BrainRequest): string | null {
  const blocks = (request.lastUserText ?? "").split("\n");
  for (let i = blocks.length - 1; i >= 0; i--) {
    const path = findFilePath(blocks[i] ?? "");
    if (path) return path;
  }
  return null;
}

/** Paths like `src/a.ts`, `./README.md`, `/tmp/x/notes.txt`: a name with an extension. */
const PATH_PATTERN =
  /(?:^|[\s"'`(])((?:\.{0,2}\/)?[\w@.-]+(?:\/[\w@.-]+)*\.[A-Za-z0-9]{1,10})(?=$|[\s"'`),:;!?])/;

export function findFilePath(text: string): string | null {
  return PATH_PATTERN.exec(text)?.[1] ?? null;
}

/** `Read`, else the first tool whose input schema has a `file_path` or `path` property. */
function findReadTool(body: MessagesRequest): { name: string; field: string } | null {
  const tools = body.tools ?? [];
  const fieldOf = (tool: (typeof tools)[number]): string | null => {
    const schema = "input_schema" in tool ? (tool.input_schema as { properties?: unknown }) : null;
    const properties = schema?.properties;
    if (!properties || typeof properties !== "object") return null;
    if ("file_path" in properties) return "file_path";
    if ("path" in properties) return "path";
    return null;
  };
  const named = tools.find((t) => t.name === "Read");
  if (named) return { name: named.name, field: fieldOf(named) ?? "file_path" };
  for (const tool of tools) {
    const field = fieldOf(tool);
    if (field) return { name: tool.name, field };
  }
  return null;
}

function hasAnyToolResult(body: MessagesRequest): boolean {
  return body.messages.some(
    (m) =>
      m.role === "user" && typeof m.content !== "string" && m.content.some((b) => b.type === "tool_result"),
  );
}

function summariseToolResults(request: BrainRequest): BrainReply {
  const parts = request.lastToolResults.map((result) => {
    const subject = toolInputPath(request.body, result.tool_use_id) ?? "the tool result";
    if (result.is_error) return `The tool reported an error for ${subject}: ${firstLine(result.content)}`;
    return describeContent(subject, result.content);
  });
  return {
    content: [{ type: "text", text: `${parts.join("\n\n")}\n\n(${SIGNATURE})` }],
    stop_reason: "end_turn",
  };
}

function toolInputPath(body: MessagesRequest, toolUseId: string): string | null {
  for (const message of body.messages) {
    if (message.role !== "assistant") continue;
    for (const block of blocksOf(message)) {
      if (block.type !== "tool_use" || block.id !== toolUseId) continue;
      const value = block.input.file_path ?? block.input.path;
      return typeof value === "string" ? value : null;
    }
  }
  return null;
}

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

function firstLine(text: string): string {
  return truncate(text.split("\n")[0] ?? "", 200);
}
