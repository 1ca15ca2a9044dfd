// Streaming the reply as it is written, as in the Agent SDK's "Streaming output" guide:
// includePartialMessages adds stream_event messages with the API's raw stream events.
import { query } from "@anthropic-ai/claude-agent-sdk";

let streamed = "";
const kinds = new Map<string, number>();
for await (const message of query({
  prompt: "Tell me a short story.",
  options: { includePartialMessages: true },
})) {
  if (message.type === "stream_event") {
    kinds.set(message.event.type, (kinds.get(message.event.type) ?? 0) + 1);
    if (message.event.type === "content_block_delta" && message.event.delta.type === "text_delta") {
      streamed += message.event.delta.text;
    }
  }
  if (message.type === "result" && message.subtype === "success") {
    console.log(`streamed the whole result: ${streamed === message.result}`);
  }
}
console.log([...kinds].map(([kind, count]) => `${kind}: ${count > 0}`).join("\n"));
