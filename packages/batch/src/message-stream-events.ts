/**
 * R-B8: a Message Batch answers with whole messages, and an item's loop reads a streamed one (it
 * asked with `stream: true`). These are the server-sent events the Messages API would have sent
 * for that message (streaming page: message_start, a start/delta/stop triple per content block,
 * message_delta with the stop reason and usage, message_stop), so the loop reads a batch answer
 * exactly as an online one.
 */
interface ApiMessage {
  readonly content: readonly Record<string, unknown>[];
  readonly usage: Record<string, unknown>;
  readonly stop_reason: unknown;
  readonly stop_sequence?: unknown;
  readonly stop_details?: unknown;
  readonly [key: string]: unknown;
}

export function messageAsEventStream(message: ApiMessage): string {
  const events: [string, object][] = [];
  const { content, ...rest } = message;
  events.push(["message_start", { type: "message_start", message: { ...rest, content: [] } }]);
  content.forEach((block, index) => {
    for (const event of blockEvents(block, index)) events.push([event.type as string, event]);
  });
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: {
        stop_reason: message.stop_reason,
        stop_sequence: message.stop_sequence ?? null,
        ...(message.stop_details === undefined ? {} : { stop_details: message.stop_details }),
      },
      usage: message.usage,
    },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");
}

/** A block as the stream carries it: text, thinking and tool input as deltas, the rest whole. */
function blockEvents(block: Record<string, unknown>, index: number): Record<string, unknown>[] {
  const start = (content_block: object) => ({ type: "content_block_start", index, content_block });
  const delta = (d: object) => ({ type: "content_block_delta", index, delta: d });
  const stop = { type: "content_block_stop", index };
  switch (block.type) {
    case "text": {
      const { text, citations, ...other } = block;
      const cited = Array.isArray(citations) ? citations : [];
      return [
        start({ ...other, text: "", ...(citations === undefined ? {} : { citations: [] }) }),
        ...cited.map((citation) => delta({ type: "citations_delta", citation })),
        delta({ type: "text_delta", text }),
        stop,
      ];
    }
    case "thinking":
      return [
        start({ type: "thinking", thinking: "", signature: "" }),
        delta({ type: "thinking_delta", thinking: block.thinking }),
        delta({ type: "signature_delta", signature: block.signature }),
        stop,
      ];
    case "tool_use":
    case "server_tool_use":
    case "mcp_tool_use": {
      const { input, ...other } = block;
      return [
        start({ ...other, input: {} }),
        delta({ type: "input_json_delta", partial_json: JSON.stringify(input ?? {}) }),
        stop,
      ];
    }
    default:
      // Redacted thinking, server-tool results and the like arrive whole in their start event.
      return [start(block), stop];
  }
}
