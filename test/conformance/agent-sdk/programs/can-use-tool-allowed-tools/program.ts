// canUseTool with allowedTools: allowed tools run without asking, the others ask the callback.
import { query } from "@anthropic-ai/claude-agent-sdk";

for await (const message of query({
  prompt: "Write hello.txt, then run the tests.",
  options: {
    allowedTools: ["Write"],
    canUseTool: async (toolName, input, { toolUseID }) => {
      console.log(`asked about ${toolName} (${toolUseID ? "has" : "no"} tool use id)`);
      return toolName === "Bash"
        ? { behavior: "deny", message: "No shell today" }
        : { behavior: "allow", updatedInput: input };
    },
  },
})) {
  if (message.type === "result")
    console.log(`${message.subtype}: ${message.permission_denials.length} denied`);
}
