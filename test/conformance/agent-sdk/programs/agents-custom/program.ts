// A custom sub-agent, as in the Agent SDK's "Subagents" guide: an agent definition with its own
// prompt and a restricted tool list, used by the main agent through the Agent tool.
import { query } from "@anthropic-ai/claude-agent-sdk";

for await (const message of query({
  prompt: "Ask the reviewer to check notes.txt for typos.",
  options: {
    allowedTools: ["Read", "Agent"],
    agents: {
      reviewer: {
        description: "Reviews text files for typos",
        prompt: "You are a meticulous proofreader. Report every typo you find, one per line.",
        tools: ["Read"],
      },
    },
  },
})) {
  if (message.type === "assistant" && message.parent_tool_use_id !== null) {
    console.log(`sub-agent message (${message.message.content.map((b) => b.type).join(",")})`);
  }
  if (message.type === "result" && message.subtype === "success") console.log(message.result);
}
