import { testServerConfig } from "@forkloop/mcp/testing";
import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

// The approver would allow the Write (and logs each call beside the hook inputs): with
// --permission-prompts none it is never asked.
const approver = testServerConfig(
  "--approver",
  JSON.stringify({ log: "{root}/hooks", replies: { Write: { behavior: "allow", updatedInput: {} } } }),
);

export default {
  what: "--permission-prompts none beside --permission-prompt-tool: nobody answers, so a Write that would prompt is denied without asking the tool",
  args: [
    "-p",
    "Create out.txt saying hi.",
    "--mcp-config",
    JSON.stringify({ mcpServers: { perm: approver } }),
    "--permission-prompt-tool",
    "mcp__perm__approve",
    "--permission-prompts",
    "none",
    "--output-format",
    "json",
  ],
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/out.txt`, content: "hi\n" }),
        text("I could not write out.txt."),
      ]),
  },
} satisfies CliScenario;
