/**
 * Streaming input: the session stays open while the prompt stream yields messages. A message sent
 * while a turn runs is queued into it; `interrupt()` stops the running turn. As with the Agent
 * SDK, a query whose last result is an error (here the interrupted turn's) throws after yielding it.
 * `node examples/dist/streaming-chat.js`
 */
import { query, type SDKUserMessage } from "@forkloop/sdk";

const said: string[] = ["Summarize package.json", "And now tsconfig.json, please"];
let release: () => void = () => {};
const done = new Promise<void>((resolve) => {
  release = resolve;
});

async function* conversation(): AsyncGenerator<SDKUserMessage> {
  for (const text of said) {
    yield { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null };
  }
  await done; // keep the session open until the second turn was interrupted
}

const chat = query({ prompt: conversation(), options: { cwd: process.cwd(), allowedTools: ["Read"] } });
let results = 0;
try {
  for await (const message of chat) {
    if (message.type === "system" && message.subtype === "init") console.log(`turn on ${message.model}`);
    if (message.type === "assistant" && results === 1) {
      // Second turn under way: stop it (nothing is waiting, so this is a hard interrupt).
      await chat.interrupt();
    }
    if (message.type === "result") {
      results++;
      console.log(`result ${results}: ${message.subtype} (${message.terminal_reason})`);
      if (results === 2) release();
    }
  }
} catch (error) {
  // The interrupted turn ends the query: its error result was yielded above, then thrown.
  if (results !== 2) throw error;
  console.log(`query ended: ${error instanceof Error ? error.message : String(error)}`);
}
