// Hooks around tool calls, as in the Agent SDK's "Hooks" guide: a PreToolUse hook with a matcher
// and a PostToolUse hook for every tool, logging what they receive.
import { type HookCallback, query } from "@anthropic-ai/claude-agent-sdk";

const log: HookCallback = async (input, toolUseID) => {
  if (input.hook_event_name === "PreToolUse" || input.hook_event_name === "PostToolUse") {
    console.log(`${input.hook_event_name} ${input.tool_name} ${toolUseID ? "with id" : "without id"}`);
  }
  return {};
};

for await (const message of query({
  prompt: "Read notes.txt and tell me how many lines it has.",
  options: {
    allowedTools: ["Read"],
    hooks: { PreToolUse: [{ matcher: "Read", hooks: [log] }], PostToolUse: [{ hooks: [log] }] },
  },
})) {
  if (message.type === "result" && message.subtype === "success") console.log(message.result);
}
