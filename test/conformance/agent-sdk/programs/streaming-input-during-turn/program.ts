// A message sent while the agent is still working, as in the Agent SDK's "Streaming input" guide:
// the second message is yielded as soon as the first turn's tool call is seen.
import { query, type SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";

let toolCallSeen: () => void = () => {};
const duringTurn = new Promise<void>((resolve) => {
  toolCallSeen = resolve;
});
let allDone: () => void = () => {};
const done = new Promise<void>((resolve) => {
  allDone = resolve;
});

async function* input(): AsyncGenerator<SDKUserMessage> {
  yield { type: "user", message: { role: "user", content: "Read notes.txt." }, parent_tool_use_id: null };
  await duringTurn;
  yield {
    type: "user",
    message: { role: "user", content: "Also tell me its first word." },
    parent_tool_use_id: null,
  };
  await done;
}

let results = 0;
for await (const message of query({ prompt: input(), options: { allowedTools: ["Read"] } })) {
  if (message.type === "assistant") {
    if (message.message.content.some((block) => block.type === "tool_use")) toolCallSeen();
    for (const block of message.message.content)
      if (block.type === "text") console.log(`assistant: ${block.text}`);
  }
  if (message.type === "result") {
    results++;
    console.log(`result ${results}: ${message.subtype}`);
    if (results === 2 || (message.subtype === "success" && message.result.includes("first word"))) allDone();
  }
}
