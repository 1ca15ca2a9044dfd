// A sub-agent left to its default (the Agent SDK runs sub-agents in the background unless the
// model asks otherwise): the messages and results the program receives.
import { query } from "@anthropic-ai/claude-agent-sdk";

for await (const message of query({
  prompt: "Have a helper count the words in notes.txt.",
  options: { allowedTools: ["Read", "Agent"] },
})) {
  if (message.type === "system" && message.subtype.startsWith("task_"))
    console.log(`system ${message.subtype}`);
  if (message.type === "result")
    console.log(`result ${message.subtype}: ${message.subtype === "success" ? message.result : ""}`);
}
