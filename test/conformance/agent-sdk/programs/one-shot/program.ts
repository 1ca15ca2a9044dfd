// A one-shot query, as in the Agent SDK's quickstart: print the assistant's text as it arrives
// and the result at the end.
import { query } from "@anthropic-ai/claude-agent-sdk";

for await (const message of query({
  prompt: "What is the capital of France? Answer in one sentence.",
  options: { maxTurns: 1 },
})) {
  if (message.type === "assistant") {
    for (const block of message.message.content) {
      if (block.type === "text") console.log(block.text);
    }
  } else if (message.type === "result") {
    console.log(
      `${message.subtype}: ${message.subtype === "success" ? message.result : message.errors.join("; ")}`,
    );
    console.log(`turns: ${message.num_turns}, error: ${message.is_error}`);
  }
}
