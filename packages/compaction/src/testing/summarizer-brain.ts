/**
 * Deterministic stand-ins for the model behind a compact or session-memory request, for tests
 * and benchmarks against the simulator. This is not a model: it extracts, it does not
 * understand. It mirrors what the compact instruction asks for — the seven sections, exact file
 * paths, errors, and every line marked `FACT:`, `DECISION:` or `CONSTRAINT:` — so tests can check
 * that the pipeline feeds each compaction the previous summary and keeps what it returned.
 * Structural types only: the compaction package may not import the simulator (SPEC §0).
 */

interface WireBlock {
  readonly type: string;
  readonly text?: string;
  readonly name?: string;
  readonly input?: unknown;
  readonly content?: string | readonly WireBlock[];
  readonly is_error?: boolean;
}

interface WireMessage {
  readonly role: string;
  readonly content: string | readonly WireBlock[];
}

const INSTRUCTION_MARKERS = [
  "Your task now is to write a summary",
  "Write session notes",
  "Here are your current session notes",
];
/** A marked line, also as a "- " bullet of an earlier summary's Decisions section. */
const MARKED_LINE = /^(?:- )?((?:FACT|DECISION|CONSTRAINT):.*)$/gm;

function blocksOf(message: WireMessage): readonly WireBlock[] {
  return typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
}

function resultText(block: WireBlock): string {
  if (typeof block.content === "string") return block.content;
  return (block.content ?? []).map((part) => part.text ?? "").join("");
}

/** The extractive summary of a request's messages, in the compact instruction's format. */
function extractiveSummary(messages: readonly WireMessage[]): string {
  const marked = new Set<string>();
  const files: string[] = [];
  const errors: string[] = [];
  let goal: string | null = null;
  let lastAssistant = "";
  for (const message of messages) {
    for (const block of blocksOf(message)) {
      const text = block.type === "tool_result" ? resultText(block) : (block.text ?? "");
      for (const match of text.matchAll(MARKED_LINE)) marked.add((match[1] ?? "").trim());
      if (block.type === "text" && message.role === "user") {
        if (INSTRUCTION_MARKERS.some((marker) => text.includes(marker))) continue;
        const pinned = /<active-task>\n?([\s\S]*?)\n?<\/active-task>/.exec(text)?.[1];
        if (pinned) goal = pinned;
        else if (!text.includes("<summary>")) goal = text;
      }
      if (block.type === "text" && message.role === "assistant") lastAssistant = text;
      if (block.type === "tool_use") {
        const input = (block.input ?? {}) as Record<string, unknown>;
        const path = input.file_path ?? input.path;
        if (typeof path === "string" && !files.includes(path)) files.push(path);
      }
      if (block.type === "tool_result" && block.is_error) errors.push(resultText(block).slice(0, 120));
      const previousFiles = /## Files read and modified\n([\s\S]*?)\n## /.exec(text)?.[1];
      for (const line of previousFiles?.split("\n") ?? []) {
        const path = line.replace(/^- /, "").trim();
        if (path.startsWith("/") && !files.includes(path)) files.push(path);
      }
    }
  }
  return [
    "<summary>",
    "## Goal and constraints",
    goal ?? "(unknown)",
    "## Decisions",
    ...[...marked].map((line) => `- ${line}`),
    "## Files read and modified",
    ...files.slice(-20).map((file) => `- ${file}`),
    "## Errors and fixes",
    ...(errors.length > 0 ? errors.slice(-5).map((error) => `- ${error}`) : ["(none)"]),
    "## Pending work",
    "Continue the goal above.",
    "## Current state",
    lastAssistant.slice(0, 300) || "(working)",
    "## Next step",
    "Carry on from the newest messages.",
    "</summary>",
  ].join("\n");
}

/**
 * A brain for the simulator: compact and session-memory requests (by their query source) get
 * an extractive summary; everything else goes to `main`.
 */
export function withSummarizer<
  Request extends {
    readonly querySource: string | null;
    readonly body: { readonly messages: readonly object[] };
  },
  Reply,
>(
  main: (request: Request) => Reply | Promise<Reply>,
): (request: Request) => Reply | Promise<Reply> | { content: { type: "text"; text: string }[] } {
  return (request) => {
    if (request.querySource === "compact" || request.querySource === "session_memory") {
      const messages = request.body.messages as readonly WireMessage[];
      return { content: [{ type: "text", text: extractiveSummary(messages) }] };
    }
    return main(request);
  };
}
