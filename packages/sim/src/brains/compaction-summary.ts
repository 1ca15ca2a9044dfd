import { blocksOf } from "../conversation-turns.js";
import type { MessageParam } from "../request-schema.js";
import type { BrainReply, BrainRequest } from "../types.js";

/** Lines a summary must carry over verbatim (facts the user asked to keep). */
const FACT_PATTERN = /remember|needle|task:/i;
const QUOTE_CHARS = 300;

/**
 * The built-in policy's answer to a compaction request: a `<summary>` with the sections the
 * prompt asked for, filled from the conversation by keyword (request, files, errors, pending
 * work, state), and every earlier user line with "remember", "needle" or "task:" verbatim.
 */
export function compactionSummary(request: BrainRequest, signature: string): BrainReply {
  const messages = request.body.messages;
  // The compaction prompt itself is the last user message: everything before it is history. A
  // client that compacts at the start of a turn sends the new prompt and the instruction as one
  // user turn (consecutive user messages merge): its text blocks before the last are a request.
  const history = messages.slice(0, -1);
  const last = messages.at(-1);
  const merged = last?.role === "user" ? blocksOf(last).slice(0, -1) : [];
  const requests = [...humanRequests(history), ...humanRequests([{ role: "user", content: merged }])];
  const facts = requests.flatMap((t) => t.split("\n")).filter((line) => FACT_PATTERN.test(line));
  const first = requests[0];
  const latest = requests.at(-1);
  const files = toolInputPaths(history);
  const errors = toolErrors(history);
  const lastReply = lastAssistantText(history);

  const fill = (name: string): string[] => {
    const lines: string[] = [];
    if (/goal|request|intent|task|constraint/i.test(name)) {
      if (first) lines.push(`- First user request: ${truncate(first.trim(), QUOTE_CHARS)}`);
      if (latest && latest !== first)
        lines.push(`- Current request: ${truncate(latest.trim(), QUOTE_CHARS)}`);
      for (const fact of facts) lines.push(`- ${fact.trim()}`);
    }
    if (/file|code/i.test(name)) for (const file of files) lines.push(`- ${file}`);
    if (/error|fix/i.test(name)) for (const error of errors) lines.push(`- ${error}`);
    if (/pending|next|remain/i.test(name) && latest) {
      lines.push(`- Continue with: ${truncate(latest.trim(), QUOTE_CHARS)}`);
    }
    if (/state|status|progress/i.test(name) && lastReply) {
      lines.push(`- Last assistant reply: ${truncate(lastReply.trim(), QUOTE_CHARS)}`);
    }
    return lines.length > 0 ? lines : ["- (nothing recorded)"];
  };

  const sections = requestedSections(request.lastUserText ?? "");
  const names = sections.length > 0 ? sections : ["Primary Request and Intent", "Files", "Pending Tasks"];
  const body: string[] = [`(${signature}) Summary of ${history.length} earlier messages.`];
  for (const name of names) body.push("", `## ${name}`, ...fill(name));
  body.push(
    "",
    "## Carried-over facts",
    ...(facts.length > 0 ? facts.map((f) => `- ${f.trim()}`) : ["- (none)"]),
  );
  return {
    content: [{ type: "text", text: `<summary>\n${body.join("\n")}\n</summary>` }],
    stop_reason: "end_turn",
  };
}

/** Section names the prompt asks for: numbered items and/or Markdown headings on their own line. */
export function requestedSections(prompt: string): string[] {
  const names: string[] = [];
  for (const line of prompt.split("\n")) {
    const match = /^\s*(?:\d+\.\s+)?(?:#{1,4}\s+)?([A-Z][^:\n]{2,60}?)\s*(?::.*)?$/.exec(line);
    const isItem = /^\s*(?:\d+\.|#{1,4})\s/.test(line);
    const name = match?.[1]?.trim();
    if (isItem && name && !names.includes(name)) names.push(name);
  }
  return names;
}

/** Text of user turns typed by a person (not only tool results). */
function humanRequests(history: readonly MessageParam[]): string[] {
  return history.flatMap((m) => {
    if (m.role !== "user") return [];
    const text = blocksOf(m)
      .flatMap((b) => (b.type === "text" ? [b.text] : []))
      .join("\n");
    return text.trim() === "" ? [] : [text];
  });
}

function toolInputPaths(history: readonly MessageParam[]): string[] {
  const paths = new Set<string>();
  for (const m of history) {
    if (m.role !== "assistant") continue;
    for (const b of blocksOf(m)) {
      if (b.type !== "tool_use") continue;
      const path = b.input.file_path ?? b.input.path;
      if (typeof path === "string") paths.add(`${path} (${b.name})`);
    }
  }
  return [...paths];
}

function toolErrors(history: readonly MessageParam[]): string[] {
  return history.flatMap((m) =>
    m.role === "user"
      ? blocksOf(m).flatMap((b) => {
          if (b.type !== "tool_result" || b.is_error !== true) return [];
          const text =
            typeof b.content === "string"
              ? b.content
              : (b.content ?? []).map((c) => ("text" in c ? c.text : "")).join(" ");
          return [truncate(text.split("\n")[0] ?? "", 200)];
        })
      : [],
  );
}

function lastAssistantText(history: readonly MessageParam[]): string | null {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i];
    if (m?.role !== "assistant") continue;
    const text = blocksOf(m)
      .flatMap((b) => (b.type === "text" ? [b.text] : []))
      .join("\n");
    if (text.trim() !== "") return text;
  }
  return null;
}

export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
