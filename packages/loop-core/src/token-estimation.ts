import type { ContentBlockParam, Message } from "./messages.js";

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
    default:
      return estimateTextTokens(JSON.stringify(block));
  }
}

/** Estimated tokens of one history message (system markers are never sent: 0). */
export function estimateMessageTokens(message: Message): number {
  if (message.type === "system") return 0;
  const content = message.message.content;
  const blocks = typeof content === "string" ? [content] : (content as readonly ContentBlockParam[]);
  return 4 + blocks.reduce((sum, block) => sum + estimateBlockTokens(block), 0);
}

/**
 * R-C8 `tokenCountWithEstimation`: the authoritative input+output usage of the latest assistant
 * response, plus an estimate for every message appended after it.
 */
export function tokenCountWithEstimation(messages: readonly Message[]): number {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.type === "assistant" && !message.apiError) {
      const usage = message.message.usage;
      const counted =
        usage.input_tokens +
        (usage.cache_creation_input_tokens ?? 0) +
        (usage.cache_read_input_tokens ?? 0) +
        usage.output_tokens;
      return counted + messages.slice(index + 1).reduce((sum, next) => sum + estimateMessageTokens(next), 0);
    }
  }
  return messages.reduce((sum, message) => sum + estimateMessageTokens(message), 0);
}
