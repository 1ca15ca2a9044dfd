import { testServerConfig } from "@forkloop/mcp/testing";
import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--permission-prompt-tool naming a tool no MCP server offers: the run stops at the first permission prompt, naming the tools there are",
  args: [
    "-p",
    "Create out.txt.",
    "--mcp-config",
    JSON.stringify({ mcpServers: { perm: testServerConfig("--approver", "{}") } }),
    "--permission-prompt-tool",
    "mcp__perm__nope",
    "--output-format",
    "json",
  ],
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/out.txt`, content: "hi\n" }),
        text("Done."),
      ]),
  },
} satisfies CliScenario;
