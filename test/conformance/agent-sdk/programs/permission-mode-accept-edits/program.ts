// A permission mode, as in the Agent SDK's "Permissions" guide: acceptEdits lets file edits run
// without asking; a shell command still needs permission and, with no callback, is denied.

import { readFileSync } from "node:fs";
import { query } from "@anthropic-ai/claude-agent-sdk";

for await (const message of query({
  prompt: "Create todo.txt, then run the tests.",
  options: { permissionMode: "acceptEdits" },
})) {
  if (message.type === "system" && message.subtype === "init") console.log(`mode: ${message.permissionMode}`);
  if (message.type === "result") {
    console.log(
      `${message.subtype}; denied: ${message.permission_denials.map((d) => d.tool_name).join(",")}`,
    );
  }
}
console.log(`todo.txt: ${JSON.stringify(readFileSync("todo.txt", "utf8"))}`);
