// A PostToolBatch hook: once every tool call of a reply has its result, it sees the whole batch
// and adds context for the model's next request.
import { type HookCallback, query } from "@anthropic-ai/claude-agent-sdk";

const audit: HookCallback = async (input) => {
  if (input.hook_event_name === "PostToolBatch") {
    const names = input.tool_calls.map((call) => call.tool_name).join(",");
    console.log(`PostToolBatch ${input.tool_calls.length} calls: ${names}`);
  }
  return {
    hookSpecificOutput: {
      hookEventName: "PostToolBatch",
      additionalContext: "The release codename is ORANGE-KITE-4.",
    },
  };
};

for await (const message of query({
  prompt: "Read a.txt, then give the release codename.",
  options: { allowedTools: ["Read"], hooks: { PostToolBatch: [{ hooks: [audit] }] } },
})) {
  if (message.type === "result" && message.subtype === "success") console.log(message.result);
}
