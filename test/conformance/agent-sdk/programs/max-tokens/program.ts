// A reply cut off at max_tokens: what the assistant message and the result say.
import { query } from "@anthropic-ai/claude-agent-sdk";

for await (const message of query({ prompt: "Write a long essay." })) {
  if (message.type === "result") {
    console.log(`${message.subtype}, stop_reason ${message.stop_reason}, is_error ${message.is_error}`);
  }
}
