// Interrupting a running turn, as in the Agent SDK's "Streaming input" guide: in streaming-input
// mode, interrupt() as soon as the agent starts a long command; the query then ends.
import { query, type SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";

let finished: () => void = () => {};
const done = new Promise<void>((resolve) => {
  finished = resolve;
});

async function* input(): AsyncGenerator<SDKUserMessage> {
  yield { type: "user", message: { role: "user", content: "Run the long build." }, parent_tool_use_id: null };
  await done;
}

const run = query({ prompt: input(), options: { allowedTools: ["Bash"] } });
for await (const message of run) {
  if (message.type === "assistant" && message.message.content.some((block) => block.type === "tool_use")) {
    console.log("interrupting");
    await run.interrupt();
  }
  if (message.type === "result") {
    console.log(`result ${message.subtype}, is_error ${message.is_error}`);
    finished();
  }
}
console.log("query ended");
