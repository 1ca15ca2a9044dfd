import type { AssistantMessage, ContentBlockParam, Message, SystemMessage } from "./messages.js";

/**
 * Margin over the structural count below. Real tokenizers split rare words into more pieces than
 * one per 4 letters; 10% keeps us above the simulator's count on every corpus we measured (code,
 * prose, JSON, CJK: 0% under, ≤ 12% over, see token-estimation.test.ts) without compacting early.
 */
const ESTIMATE_MARGIN = 1.1;

/**
 * R-C8: a conservative token estimate for text that has not been counted by the API yet. It must
 * over-estimate rather than under-estimate: an under-estimate lets a request overflow the window.
 * The structure follows the simulator's tokenizer (packages/sim/src/tokenizer.ts): a run of ASCII
 * word characters costs one token per started 4 characters, whitespace is free, every other code
 * point (punctuation, symbols, CJK, any non-ASCII) costs one. A flat `chars / 4` (what Claude Code
 * does, api doc §10) under-counts JSON and punctuation-heavy code by 2–3×, hence the walk.
 */
export function estimateTextTokens(text: string): number {
  let tokens = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95) {
      run++;
      continue;
    }
    if (run > 0) {
      tokens += Math.ceil(run / 4);
      run = 0;
    }
    if (c === 32 || c === 9 || c === 10 || c === 13) continue;
    // A surrogate pair is one code point.
    if (c >= 0xd800 && c <= 0xdbff) i++;
    tokens++;
  }
  if (run > 0) tokens += Math.ceil(run / 4);
  return Math.ceil(tokens * ESTIMATE_MARGIN);
}

/** Tokens the API counts per PDF page, at most (its text plus the page as an image). */
const PDF_PAGE_TOKENS = 3_000;
const documentEstimates = new WeakMap<object, number>();

/**
 * A base64 PDF is counted by its pages, not its base64 (R-T7: a 20-page document is ~60 000
 * tokens, its base64 text would count as millions and trigger a compaction); text documents by
 * their text. Cached per block: the estimate runs every turn.
 */
function estimateDocumentTokens(block: ContentBlockParam & { type: "document" }): number {
  const known = documentEstimates.get(block);
  if (known !== undefined) return known;
  const source = block.source;
  let tokens: number;
  if (source.type === "base64") {
    const pages = Buffer.from(source.data, "base64")
      .toString("latin1")
      .match(/\/Type\s*\/Page(?![s\w])/g);
    tokens = Math.max(1, pages?.length ?? 1) * PDF_PAGE_TOKENS;
  } else if (source.type === "text") {
    tokens = estimateTextTokens(source.data);
  } else {
    tokens = estimateTextTokens(JSON.stringify(block));
  }
  documentEstimates.set(block, tokens);
  return tokens;
}

function estimateBlockTokens(block: ContentBlockParam | string): number {
  if (typeof block === "string") return estimateTextTokens(block);
  switch (block.type) {
    case "text":
      return estimateTextTokens(block.text);
    case "tool_use":
      return estimateTextTokens(block.name) + estimateTextTokens(JSON.stringify(block.input));
    case "tool_result":
      return typeof block.content === "string" || block.content === undefined
        ? estimateTextTokens(block.content ?? "")
        : block.content.reduce((sum, part) => sum + estimateBlockTokens(part as ContentBlockParam), 0);
    case "thinking":
      return estimateTextTokens(block.thinking);
    case "image":
      return 1_600;
    case "document":
      return estimateDocumentTokens(block);
    default:
      return estimateTextTokens(JSON.stringify(block));
  }
}

/**
 * Estimated tokens of one history message: a system marker is never sent (0); hook context kept
 * as a system message (`model_context`) is, as a `role: "system"` message.
 */
export function estimateMessageTokens(message: Message): number {
  if (message.type === "system")
    return message.subtype === "model_context" ? 4 + estimateTextTokens(message.content) : 0;
  const content = message.message.content;
  const blocks = typeof content === "string" ? [content] : (content as readonly ContentBlockParam[]);
  return 4 + blocks.reduce((sum, block) => sum + estimateBlockTokens(block), 0);
}

/** Input + output tokens a response reported; 0 for synthetic messages (errors, interrupts). */
export function reportedTokens(message: AssistantMessage): number {
  if (message.apiError) return 0;
  const usage = message.message.usage;
  return (
    usage.input_tokens +
    (usage.cache_creation_input_tokens ?? 0) +
    (usage.cache_read_input_tokens ?? 0) +
    usage.output_tokens
  );
}

function estimateAll(messages: readonly Message[]): number {
  return messages.reduce((sum, message) => sum + estimateMessageTokens(message), 0);
}

/**
 * R-C8 `tokenCountWithEstimation`: the authoritative input+output usage of the latest response,
 * plus an estimate for every message appended after it.
 *
 * After a compaction the kept tail still carries responses from before it, whose usage counted
 * the whole old history: trusting them would re-trigger compaction at once. So a response counts
 * only if it came after the latest compact boundary; until one does, the boundary's own
 * post-compaction count (summary + kept tail) plus an estimate of what was appended since is used.
 */
export function tokenCountWithEstimation(messages: readonly Message[]): number {
  const boundaryIndex = messages.findLastIndex(
    (message) => message.type === "system" && message.subtype === "compact_boundary",
  );
  const boundary = boundaryIndex >= 0 ? (messages[boundaryIndex] as SystemMessage) : undefined;
  for (let index = messages.length - 1; index > boundaryIndex; index--) {
    const message = messages[index];
    if (message?.type !== "assistant") continue;
    if (boundary !== undefined && message.timestamp < boundary.timestamp) continue;
    const reported = reportedTokens(message);
    if (reported > 0) return reported + estimateAll(messages.slice(index + 1));
  }
  if (boundary?.compactMetadata !== undefined) {
    // messages[boundaryIndex + 1] is the summary; the kept tail predates the boundary.
    const appended = messages
      .slice(boundaryIndex + 2)
      .filter((message) => message.timestamp >= boundary.timestamp);
    return boundary.compactMetadata.postTokens + estimateAll(appended);
  }
  return estimateAll(messages.slice(boundaryIndex + 1));
}
