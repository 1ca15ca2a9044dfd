// A PreToolUse hook that rewrites a tool's input and adds context, as in the Agent SDK's "Hooks"
// guide: every Write is redirected into the drafts/ directory.

import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { type HookCallback, query } from "@anthropic-ai/claude-agent-sdk";

const intoDrafts: HookCallback = async (input) => {
  if (input.hook_event_name !== "PreToolUse") return {};
  const toolInput = input.tool_input as { file_path: string; content: string };
  return {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "allow",
      updatedInput: { ...toolInput, file_path: join(process.cwd(), "drafts", basename(toolInput.file_path)) },
      additionalContext: "Files are written to drafts/.",
    },
  };
};

for await (const message of query({
  prompt: "Write a haiku to haiku.txt.",
  options: { hooks: { PreToolUse: [{ matcher: "Write", hooks: [intoDrafts] }] } },
})) {
  if (message.type === "result")
    console.log(`${message.subtype}; drafts/haiku.txt exists: ${existsSync("drafts/haiku.txt")}`);
}
