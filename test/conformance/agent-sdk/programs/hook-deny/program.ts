// A PreToolUse hook that blocks a tool, as in the Agent SDK's "Hooks" guide: denied calls are
// reported in the result's permission_denials.
import { type HookCallback, query } from "@anthropic-ai/claude-agent-sdk";

const noShell: HookCallback = async (input) => {
  if (input.hook_event_name !== "PreToolUse") return {};
  return {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "Shell commands are not allowed here",
    },
  };
};

for await (const message of query({
  prompt: "List the files with ls.",
  options: { allowedTools: ["Bash"], hooks: { PreToolUse: [{ matcher: "Bash", hooks: [noShell] }] } },
})) {
  if (message.type === "user") {
    for (const block of Array.isArray(message.message.content) ? message.message.content : []) {
      if (block.type === "tool_result") console.log(`tool result (error: ${block.is_error === true})`);
    }
  }
  if (message.type === "result") {
    console.log(
      `${message.subtype}, denials: ${JSON.stringify(message.permission_denials.map((d) => d.tool_name))}`,
    );
  }
}
