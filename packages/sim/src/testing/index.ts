import { countTokens } from "../tokenizer.js";
import type { Brain, BrainReply, ReplyBlock } from "../types.js";

/**
 * A brain that calls one tool, then answers: a request whose last message holds no tool_result
 * gets the call, the request that brings its result gets `text` (an item that runs one command).
 */
export function toolThenTextBrain(
  tool: { readonly name: string; readonly input: Record<string, unknown> },
  text: string,
): Brain {
  return (request) =>
    request.lastToolResults.length > 0
      ? { content: [{ type: "text", text }] }
      : { content: [{ type: "tool_use", name: tool.name, input: tool.input }] };
}

/**
 * A brain that answers the n-th request it sees with `replies[n]` (the last one repeats), and
 * records the requests it saw. Blocks may be given directly for brevity.
 */
export function sequenceBrain(replies: readonly (BrainReply | readonly ReplyBlock[])[]): Brain & {
  readonly seen: Parameters<Brain>[0][];
} {
  const seen: Parameters<Brain>[0][] = [];
  const brain = (request: Parameters<Brain>[0]): BrainReply => {
    seen.push(request);
    const reply = replies[Math.min(seen.length - 1, replies.length - 1)];
    if (reply === undefined) throw new Error("sequenceBrain: no replies given");
    return isBlocks(reply) ? { content: reply } : reply;
  };
  return Object.assign(brain, { seen });
}

function isBlocks(reply: BrainReply | readonly ReplyBlock[]): reply is readonly ReplyBlock[] {
  return Array.isArray(reply);
}

/**
 * Text of exactly `tokens` tokens under the simulator's tokenizer: `word` repeated, separated by
 * (free) spaces. Different words give prompts of the same size that do not share a cache prefix.
 */
export function textOfTokens(tokens: number, word = "abcd"): string {
  if (countTokens(word) !== 1 || /\s/.test(word))
    throw new TypeError(`textOfTokens: ${JSON.stringify(word)} is not one token without whitespace`);
  return `${word} `.repeat(tokens).trim();
}
export { agentRequests, weightedTokens } from "./request-records.js";
