import { estimateTextTokens, type Message } from "@forkloop/loop-core";
import { isHumanTurn, messageText, requestText, toolResultBlocks, toolResultText } from "./message-shape.js";

/** The sections every summary must have, in order (what users say compaction loses). */
export const SUMMARY_SECTIONS = [
  "Goal and constraints",
  "Decisions",
  "Files read and modified",
  "Errors and fixes",
  "Pending work",
  "Current state",
  "Next step",
] as const;

/**
 * The one instruction appended after the parent's exact prefix (R-F3): the compact request differs
 * from the parent's next request only by this user message, so everything before it is a cache read.
 */
export function buildCompactInstruction(customInstructions?: string): string {
  const sections = SUMMARY_SECTIONS.map((title, i) => `${i + 1}. ## ${title}`).join("\n");
  const custom = customInstructions?.trim()
    ? `\n\nAdditional instructions from the user for this summary:\n${customInstructions.trim()}`
    : "";
  return `Your task now is to write a summary of the conversation so far, so that the work can continue after the earlier messages are removed from the context. Do not call any tools. Do not continue the task itself.

Write the summary inside <summary></summary> tags with exactly these Markdown sections:
${sections}

Rules:
- Under "Goal and constraints", restate the user's current request and every constraint they gave, in their words where possible.
- Keep exact identifiers: file paths, function names, commands, error messages, numbers and any fact the user asked you to remember.
- Under "Files read and modified", list each file with why it was read or what was changed.
- Under "Pending work" and "Next step", say precisely what remains and what to do first.
- Be much shorter than the conversation itself: facts, not narration.${custom}`;
}

/** Sent with the retry when the first summary was rejected (validateSummary). */
export function buildRetryInstruction(
  customInstructions: string | undefined,
  reason: string,
  maxTokens: number,
): string {
  return `${buildCompactInstruction(customInstructions)}

A previous attempt was rejected: ${reason}. Keep the user's current request under "Goal and constraints" and stay under ${maxTokens} tokens.`;
}

/** The text between <summary> tags, or the whole reply without an <analysis> block. */
export function extractSummary(reply: string): string {
  const match = /<summary>([\s\S]*?)<\/summary>/.exec(reply);
  if (match?.[1] !== undefined) return match[1].trim();
  return reply.replace(/<analysis>[\s\S]*?<\/analysis>/g, "").trim();
}

const ACTIVE_TASK_PATTERN = /<active-task>\n?([\s\S]*?)\n?<\/active-task>/;

/**
 * The task in progress: the newest human request, or — once that was summarised away — the
 * active task pinned in the newest compact summary message. Null for a history with neither.
 */
export function findActiveTask(messages: readonly Message[]): string | null {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (isHumanTurn(message)) {
      const text = requestText(message).trim();
      if (text.length > 0) return text;
    }
    if (message.type === "user" && message.isMeta) {
      const pinned = ACTIVE_TASK_PATTERN.exec(messageText(message));
      if (pinned?.[1] !== undefined) return pinned[1];
    }
  }
  return null;
}

const STOPWORDS = new Set(
  "the and for with that this from into your have will then than when what which where while about them they their there these those please should would could".split(
    " ",
  ),
);

/** Distinctive words of the task: what a summary that kept the task must mention. */
function taskKeywords(task: string): readonly string[] {
  const words = task.toLowerCase().match(/[\p{L}\p{N}_./-]{4,}/gu) ?? [];
  return [...new Set(words.filter((word) => !STOPWORDS.has(word)))].slice(0, 24);
}

/** Share of the task's keywords a summary must mention to count as keeping the task. */
const TASK_KEYWORD_COVERAGE = 0.6;

export type SummaryVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * A summary is rejected when it is empty, not smaller than the messages it replaces (then the
 * compaction freed nothing), or when it dropped the active task (the complaint about every peer
 * tool): fewer than 60% of the task's distinctive words appear in it.
 */
export function validateSummary(
  summary: string,
  replaced: { readonly tokens: number },
  activeTask: string | null,
): SummaryVerdict {
  if (summary.trim().length === 0) return { ok: false, reason: "the summary is empty" };
  const tokens = estimateTextTokens(summary);
  if (tokens >= replaced.tokens) {
    return {
      ok: false,
      reason: `the summary (${tokens} tokens) is not smaller than the ${replaced.tokens} tokens it replaces`,
    };
  }
  if (activeTask !== null) {
    const keywords = taskKeywords(activeTask);
    if (keywords.length > 0) {
      const lower = summary.toLowerCase();
      const kept = keywords.filter((word) => lower.includes(word));
      if (kept.length / keywords.length < TASK_KEYWORD_COVERAGE) {
        const missing = keywords.filter((word) => !lower.includes(word)).slice(0, 8);
        return { ok: false, reason: `the summary dropped the active task (missing: ${missing.join(", ")})` };
      }
    }
  }
  return { ok: true };
}

/** Cuts text to about `maxTokens` estimated tokens, on a line boundary when possible. */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (estimateTextTokens(text) <= maxTokens) return text;
  let low = 0;
  let high = text.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (estimateTextTokens(text.slice(0, mid)) <= maxTokens) low = mid;
    else high = mid - 1;
  }
  const cut = text.slice(0, low);
  const lastLine = cut.lastIndexOf("\n");
  return `${lastLine > low / 2 ? cut.slice(0, lastLine) : cut}\n[… truncated]`;
}

/**
 * The fallback when the model's summary was rejected twice (or no model may be asked): built
 * from the history itself, no model involved. It keeps the previous summary (truncated), the
 * active task, the files touched, the errors seen, and the newest text of the conversation.
 */
export function buildTruncationSummary(input: {
  readonly replaced: readonly Message[];
  readonly activeTask: string | null;
  readonly files: readonly string[];
  readonly maxTokens: number;
}): string {
  const previous = input.replaced
    .filter((message) => message.type === "user" && message.isMeta)
    .map((message) => /<summary>([\s\S]*?)<\/summary>/.exec(messageText(message))?.[1])
    .filter((text): text is string => text !== undefined)
    .at(-1);
  const errors = input.replaced
    .flatMap((message) => toolResultBlocks(message).filter((block) => block.is_error === true))
    .slice(-5)
    .map((block) => `- ${toolResultText(block).slice(0, 200)}`);
  const recentText = input.replaced
    .filter((message) => message.type === "assistant")
    .slice(-3)
    .map((message) => messageText(message).slice(0, 400))
    .join("\n");
  const budget = Math.max(50, input.maxTokens);
  const parts = [
    "## Goal and constraints",
    input.activeTask ?? "(no explicit request found)",
    "## Decisions",
    previous
      ? truncateToTokens(previous, Math.floor(budget / 3))
      : "(not recorded: this summary was built by truncation)",
    "## Files read and modified",
    input.files.length > 0 ? input.files.map((file) => `- ${file}`).join("\n") : "(none)",
    "## Errors and fixes",
    errors.length > 0 ? errors.join("\n") : "(none recorded)",
    "## Pending work",
    "(see the active task and the recent messages)",
    "## Current state",
    truncateToTokens(recentText, Math.floor(budget / 4)),
    "## Next step",
    "Continue the active task from the recent messages below.",
  ];
  return truncateToTokens(parts.join("\n"), budget);
}
