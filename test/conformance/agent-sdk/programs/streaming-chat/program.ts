// Streaming input, as in the Agent SDK's "Streaming input" guide: one long-lived session fed by an
// async generator; the second message is sent once the first turn's result has arrived.
import { query, type SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";

let firstTurnDone: () => void = () => {};
const firstTurn = new Promise<void>((resolve) => {
  firstTurnDone = resolve;
});

async function* conversation(): AsyncGenerator<SDKUserMessage> {
  yield {
    type: "user",
    message: { role: "user", content: "Remember the number 42, please." },
    parent_tool_use_id: null,
  };
  await firstTurn;
  yield {
    type: "user",
    message: { role: "user", content: "Which number did I ask you to remember?" },
    parent_tool_use_id: null,
  };
}

let results = 0;
for await (const message of query({ prompt: conversation(), options: { maxTurns: 3 } })) {
  if (message.type === "assistant") {
    const text = message.message.content.flatMap((block) => (block.type === "text" ? [block.text] : []));
    if (text.length > 0) console.log(`assistant: ${text.join("")}`);
  }
  if (message.type === "result") {
    results++;
    console.log(`result ${results}: ${message.subtype} (${message.num_turns} turns)`);
    if (results === 1) firstTurnDone();
  }
}
