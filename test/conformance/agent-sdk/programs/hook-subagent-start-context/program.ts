// A SubagentStart hook that gives the sub-agent context, as in the Agent SDK's "Hooks" guide:
// what the sub-agent's model then reads, and where.
import { type HookCallback, query } from "@anthropic-ai/claude-agent-sdk";

const context: HookCallback = async () => ({
  hookSpecificOutput: {
    hookEventName: "SubagentStart",
    additionalContext: "SUBCTX: the notes are plain text.",
  },
});

for await (const message of query({
  prompt: "Have a helper read notes.txt.",
  options: { allowedTools: ["Read", "Agent"], hooks: { SubagentStart: [{ hooks: [context] }] } },
})) {
  if (message.type === "result" && message.subtype === "success") console.log(message.result);
}
