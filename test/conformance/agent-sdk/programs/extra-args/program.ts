// Claude Code CLI flags passed through extraArgs, as a GitHub Action does: --json-schema for a
// structured result and --max-turns.
import { query } from "@anthropic-ai/claude-agent-sdk";

const schema = { type: "object", properties: { verdict: { type: "string" } }, required: ["verdict"] };

for await (const message of query({
  prompt: "Is this pull request ready to merge?",
  options: { extraArgs: { "json-schema": JSON.stringify(schema), "max-turns": "3" } },
})) {
  if (message.type === "result") {
    console.log(message.subtype);
    if (message.subtype === "success") console.log(JSON.stringify(message.structured_output ?? null));
  }
}
