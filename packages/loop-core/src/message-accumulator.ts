import { MalformedStreamError } from "./errors.js";
import type { ApiMessage, ContentBlock, RawMessageStreamEvent, ToolUseBlock } from "./messages.js";

/**
 * Builds the response message from raw SSE events, as they arrive. Kept separate from the HTTP
 * client so the streaming tool executor can see each tool_use block the moment its
 * `content_block_stop` arrives (R-T2), before `message_stop`.
 */
export class MessageAccumulator {
  private message: ApiMessage | undefined;
  private readonly partialJson = new Map<number, string>();
  private stopped = false;

  /** Feeds one event; returns the block that just completed, if any. */
  push(event: RawMessageStreamEvent): ContentBlock | undefined {
    switch (event.type) {
      case "message_start":
        this.message = { ...event.message, content: [], usage: { ...event.message.usage } };
        return undefined;
      case "content_block_start": {
        const content = this.current().content;
        content[event.index] = { ...event.content_block } as ContentBlock;
        return undefined;
      }
      case "content_block_delta": {
        const block = this.current().content[event.index];
        if (!block) return undefined;
        const delta = event.delta;
        switch (delta.type) {
          case "text_delta":
            if (block.type === "text") block.text += delta.text;
            break;
          case "input_json_delta":
            this.partialJson.set(event.index, (this.partialJson.get(event.index) ?? "") + delta.partial_json);
            break;
          case "thinking_delta":
            if (block.type === "thinking") block.thinking += delta.thinking;
            break;
          case "signature_delta":
            if (block.type === "thinking") block.signature = delta.signature;
            break;
          case "citations_delta":
            if (block.type === "text") block.citations = [...(block.citations ?? []), delta.citation];
            break;
          default:
            break;
        }
        return undefined;
      }
      case "content_block_stop": {
        const block = this.current().content[event.index];
        if (!block) return undefined;
        if (block.type === "tool_use" || block.type === "server_tool_use") {
          const json = this.partialJson.get(event.index);
          // The API starts a tool_use with input {} and streams the real input as JSON text.
          (block as ToolUseBlock).input = json && json.length > 0 ? parseJsonOr(json, {}) : block.input;
        }
        return block;
      }
      case "message_delta": {
        const message = this.current();
        message.stop_reason = event.delta.stop_reason;
        message.stop_sequence = event.delta.stop_sequence;
        // Counts in message_delta are cumulative; input/cache counters only when non-null.
        const usage = message.usage;
        usage.output_tokens = event.usage.output_tokens;
        if (event.usage.input_tokens != null) usage.input_tokens = event.usage.input_tokens;
        if (event.usage.cache_creation_input_tokens != null)
          usage.cache_creation_input_tokens = event.usage.cache_creation_input_tokens;
        if (event.usage.cache_read_input_tokens != null)
          usage.cache_read_input_tokens = event.usage.cache_read_input_tokens;
        // Beta context editing reports its applied edits here (R-C2 cached variant, api doc §9).
        const reported = (event as { context_management?: unknown }).context_management;
        if (reported != null) (message as { context_management?: unknown }).context_management = reported;
        return undefined;
      }
      case "message_stop":
        this.stopped = true;
        return undefined;
      default:
        return undefined;
    }
  }

  /** The finished message, or undefined when the stream ended without `message_stop`. */
  finish(): ApiMessage | undefined {
    if (!this.stopped || !this.message) return undefined;
    return { ...this.message, content: this.message.content.filter((block) => block !== undefined) };
  }

  private current(): ApiMessage {
    if (!this.message) throw new MalformedStreamError("stream event before message_start");
    return this.message;
  }
}

function parseJsonOr(text: string, fallback: Record<string, unknown>): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // A cut stream (max_tokens) can leave partial JSON: the tool then fails validation, as data.
    return fallback;
  }
}
