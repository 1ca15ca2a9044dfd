// The API overloaded (529) twice before answering: the SDK retries and reports each retry.
import { query } from "@anthropic-ai/claude-agent-sdk";

for await (const message of query({ prompt: "Say something." })) {
  if (message.type === "system" && message.subtype === "api_retry") console.log(`retry ${message.attempt}`);
  if (message.type === "result")
    console.log(`${message.subtype}: ${message.subtype === "success" ? message.result : ""}`);
}
