// A PostToolBatch hook whose context is long (12,005 characters in lines): the model gets a
// preview of it and where it was saved, not the whole text.
import { type HookCallback, query } from "@anthropic-ai/claude-agent-sdk";

const LINE = "x".repeat(299);
const context: HookCallback = async () => ({
  hookSpecificOutput: {
    hookEventName: "PostToolBatch",
    additionalContext: `CTXB\n${`${LINE}\n`.repeat(40)}`,
  },
});

for await (const message of query({
  prompt: "Read a.txt.",
  options: { allowedTools: ["Read"], hooks: { PostToolBatch: [{ hooks: [context] }] } },
})) {
  if (message.type === "result" && message.subtype === "success") console.log(message.result);
}
