// Cancelling with an AbortController, as in the Agent SDK's reference (Options.abortController):
// abort once the agent starts a long command, and report how the query ends.
import { AbortError, query } from "@anthropic-ai/claude-agent-sdk";

const abortController = new AbortController();
try {
  for await (const message of query({
    prompt: "Run the long build.",
    options: { abortController, allowedTools: ["Bash"] },
  })) {
    if (message.type === "assistant" && message.message.content.some((block) => block.type === "tool_use")) {
      console.log("aborting");
      abortController.abort();
    }
    if (message.type === "result") console.log(`result ${message.subtype}`);
  }
  console.log("ended without an error");
} catch (error) {
  console.log(
    `ended with ${error instanceof AbortError ? "an AbortError" : `another error: ${String(error)}`}`,
  );
}
