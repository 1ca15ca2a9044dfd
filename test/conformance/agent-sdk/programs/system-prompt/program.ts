// Custom system prompts, as in the Agent SDK's "Modifying system prompts" guide: a string that
// replaces the default, then the claude_code preset with an appended instruction.
import { query } from "@anthropic-ai/claude-agent-sdk";

for await (const message of query({
  prompt: "Greet me.",
  options: { systemPrompt: "You are a pirate. Answer like one." },
})) {
  if (message.type === "result" && message.subtype === "success") console.log(message.result);
}

for await (const message of query({
  prompt: "Greet me again.",
  options: { systemPrompt: { type: "preset", preset: "claude_code", append: "Always end with Arr!" } },
})) {
  if (message.type === "result" && message.subtype === "success") console.log(message.result);
}
