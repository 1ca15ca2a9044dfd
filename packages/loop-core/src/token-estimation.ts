import type { ContentBlockParam, Message } from "./messages.js";

/**
 * R-C8: a conservative token estimate for text that has not been counted by the API yet. It must
 * over-estimate rather than under-estimate: an under-estimate lets a request overflow the window.
 * The constants are tuned against the simulator's tokenizer (see packages/compaction tests).
 */
export function estimateTextTokens(text: string): number {
  let tokens = 0;
  for (const char of text) {
    // CJK and other wide characters cost about one token each; ASCII runs about 4 chars a token.
    tokens += char.charCodeAt(0) > 0x2e7f ? 1 : 0.3;
  }
  return Math.ceil(tokens);
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
