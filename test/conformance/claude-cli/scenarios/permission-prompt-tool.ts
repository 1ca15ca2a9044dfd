import { testServerConfig } from "@forkloop/mcp/testing";
import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

// The approver (the repo's MCP test server's `approve` tool) logs each call beside the hook inputs.
const approver = testServerConfig(
  "--approver",
  JSON.stringify({
    log: "{root}/hooks",
    replies: {
      Write: { behavior: "allow", updatedInput: { file_path: "{work}/out.txt", content: "approved\n" } },
      Bash: { behavior: "deny", message: "No shell here." },
      Edit: "yes",
    },
  }),
);

export default {
  what: "--permission-prompt-tool: an MCP tool answers each permission prompt (allow with a changed input, deny, a reply that is not a permission result)",
  args: [
    "-p",
    "Create out.txt, make made.txt, then fix the typo in notes.txt.",
    "--mcp-config",
    JSON.stringify({ mcpServers: { perm: approver } }),
    "--permission-prompt-tool",
    "mcp__perm__approve",
    "--output-format",
    "stream-json",
    "--verbose",
  ],
  files: { "notes.txt": "teh plan\n" },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/out.txt`, content: "hi\n" }),
        toolCall("Bash", { command: "touch made.txt", description: "Make a file" }),
        toolCall("Edit", { file_path: `${request.work}/notes.txt`, old_string: "teh", new_string: "the" }),
        text("Done."),
      ]),
  },
} satisfies CliScenario;
