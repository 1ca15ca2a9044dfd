import { randomUUID } from "node:crypto";
import type {
  ApiMessage,
  CacheSafeParams,
  ContentBlockParam,
  Message,
  MessageParam,
  ToolResultBlockParam,
  UserMessage,
} from "@forkloop/loop-core";

function isHistoryMessage(message: Message | MessageParam): message is Message {
  return "uuid" in message && "type" in message;
}

function userMessage(content: string | readonly ContentBlockParam[], parentUuid: string | null): UserMessage {
  return {
    type: "user",
    uuid: randomUUID(),
    parentUuid,
    timestamp: new Date().toISOString(),
    message: { role: "user", content },
  };
}

/**
 * A fork's messages as history messages chained after the parent's prefix. Plain API messages
 * (MessageParam) are wrapped; assistant ones get a synthetic response envelope that
 * `toApiMessages` turns back into the same blocks.
 */
export function toForkHistory(
  promptMessages: readonly (Message | MessageParam)[],
  parentUuid: string | null,
): Message[] {
  const history: Message[] = [];
  let previous = parentUuid;
  for (const message of promptMessages) {
    let next: Message;
    if (isHistoryMessage(message)) {
      next = message;
    } else if (message.role === "user") {
      next = userMessage(message.content as string | ContentBlockParam[], previous);
    } else {
      const content =
        typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
      const apiMessage = {
        id: `msg_fork_${randomUUID()}`,
        type: "message",
        role: "assistant",
        model: "",
        content: content.map((block) => (block.type === "text" ? { ...block, citations: null } : block)),
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: {
          input_tokens: 0,
          output_tokens: 0,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      } as unknown as ApiMessage;
      next = {
        type: "assistant",
        uuid: randomUUID(),
        parentUuid: previous,
        timestamp: new Date().toISOString(),
        message: apiMessage,
      };
    }
    history.push(next);
    previous = next.uuid;
  }
  return history;
}

/** Text the parent's unanswered tool calls get inside a fork (the parent answers them itself). */
const FORK_PLACEHOLDER_RESULT =
  "This call is being handled by the parent agent; continue with your own task.";

/**
 * The messages a fork appends after the parent's prefix (R-F3): when the parent's history ends
 * with an assistant turn that called tools (a fork started from inside a tool call), the API
 * requires a tool_result for each of them first (R-L12), so they get a placeholder; then the
 * fork's directive. Everything before stays byte-identical, so it is read from the cache.
 */
export function buildForkDirective(cacheSafeParams: CacheSafeParams, directive: string): MessageParam[] {
  const last = [...cacheSafeParams.forkContextMessages]
    .reverse()
    .find((message) => message.type !== "system");
  const results: ToolResultBlockParam[] = [];
  if (last?.type === "assistant" && !last.apiError) {
    for (const block of last.message.content) {
      if (block.type === "tool_use") {
        results.push({ type: "tool_result", tool_use_id: block.id, content: FORK_PLACEHOLDER_RESULT });
      }
    }
  }
  return [{ role: "user", content: [...results, { type: "text", text: directive }] }];
}

/**
 * R-F4: marks the end of the parent's prefix with a cache breakpoint (on the last block of the
 * last context message, when that is a user turn). Without it the first fork of a fan-out writes
 * the cache only at its own last block — a prefix no sibling shares — so siblings could read
 * only tools + system. With it the first fork writes the shared history and the others read it.
 * It is where the parent's own request had its moving breakpoint, and the marker is not part of
 * the cache key (api doc §5), so the prefix stays the parent's.
 */
export function markPrefixBoundary(context: readonly Message[]): Message[] {
  const marked = [...context];
  for (let index = marked.length - 1; index >= 0; index--) {
    const message = marked[index];
    if (message === undefined || message.type === "system") continue;
    if (message.type !== "user") return marked;
    const content: ContentBlockParam[] =
      typeof message.message.content === "string"
        ? [{ type: "text", text: message.message.content }]
        : [...message.message.content];
    const last = content.length - 1;
    const block = content[last];
    if (block === undefined || (block.type === "text" && block.text.length === 0)) return marked;
    if (
      block.type !== "text" &&
      block.type !== "tool_result" &&
      block.type !== "image" &&
      block.type !== "document"
    ) {
      return marked;
    }
    content[last] = { ...block, cache_control: { type: "ephemeral" } } as ContentBlockParam;
    marked[index] = { ...message, message: { ...message.message, content } };
    return marked;
  }
  return marked;
}
