// A hook that stops the agent, as in the Agent SDK's "Hooks" guide: `continue: false` with a
// stopReason after the first tool call.
import { type HookCallback, query } from "@anthropic-ai/claude-agent-sdk";

const stopAfterFirstTool: HookCallback = async () => ({
  continue: false,
  stopReason: "One tool call is enough",
});

for await (const message of query({
  prompt: "Read notes.txt, then summarize it.",
  options: { allowedTools: ["Read"], hooks: { PostToolUse: [{ hooks: [stopAfterFirstTool] }] } },
})) {
  if (message.type === "result") {
    console.log(
      `${message.subtype} is_error=${message.is_error} result=${JSON.stringify(message.subtype === "success" ? message.result : null)}`,
    );
  }
}
