import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "an external stdio MCP server: its status in system/init, its tool called, its result",
  files: { "a.txt": "a\n", "b.txt": "b\n" },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("mcp__files__list_directory", { path: request.work }),
        text(`Listing: ${request.lastToolResults[0]?.content.replace(/\s+/g, " ") ?? ""}`),
      ]),
  },
} satisfies ProgramCase;
