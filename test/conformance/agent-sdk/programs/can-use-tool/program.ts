// canUseTool without allowedTools, as in the Agent SDK's "Handling permissions" guide: every tool
// call that needs permission asks the callback; it allows reads and denies writes.
import { type CanUseTool, query } from "@anthropic-ai/claude-agent-sdk";

const canUseTool: CanUseTool = async (toolName, input, options) => {
  console.log(`asked about ${toolName}; suggestions: ${options.suggestions?.length ?? 0}`);
  if (toolName === "Write") return { behavior: "deny", message: "Writing is not allowed" };
  return { behavior: "allow", updatedInput: input };
};

for await (const message of query({
  prompt: "Copy notes.txt to copy.txt.",
  options: { canUseTool },
})) {
  if (message.type === "result") {
    console.log(
      `${message.subtype}: denials ${message.permission_denials.map((d) => d.tool_name).join(",")}`,
    );
  }
}
