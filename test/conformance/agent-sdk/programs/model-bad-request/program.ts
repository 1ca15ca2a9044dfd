// The API refuses the request (400): no retry; how the query reports it.
import { query } from "@anthropic-ai/claude-agent-sdk";

for await (const message of query({ prompt: "Say something." })) {
  if (message.type === "assistant") console.log(`assistant (error: ${message.error ?? "none"})`);
  if (message.type === "result") {
    console.log(`${message.subtype}, is_error ${message.is_error}`);
    if (message.subtype === "success") console.log(message.result);
    else console.log(message.errors.join("; "));
  }
}
