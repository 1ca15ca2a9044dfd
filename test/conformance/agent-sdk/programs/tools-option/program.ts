// A restricted tool set, as in the Agent SDK's "tools" option: the session offers the named
// built-in tools and nothing else (no Agent, no SendMessage).
import { query } from "@anthropic-ai/claude-agent-sdk";

for await (const message of query({
  prompt: "Find the TODOs in notes.txt.",
  options: { tools: ["Read", "Grep"], maxTurns: 1 },
})) {
  if (message.type === "system" && message.subtype === "init") {
    console.log(`tools: ${[...message.tools].sort().join(", ")}`);
  }
  if (message.type === "result") console.log(message.subtype);
}
