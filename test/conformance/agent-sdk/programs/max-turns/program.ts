// A turn limit, as in the Agent SDK's reference (Options.maxTurns): one turn, but the agent wants
// a second one after its tool call.
import { query } from "@anthropic-ai/claude-agent-sdk";

for await (const message of query({
  prompt: "Read notes.txt and summarize it.",
  options: { maxTurns: 1, allowedTools: ["Read"] },
})) {
  if (message.type === "result") {
    console.log(`${message.subtype}, is_error ${message.is_error}, turns ${message.num_turns}`);
    if (message.subtype !== "success") console.log(`errors: ${message.errors.length}`);
  }
}
