import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "canUseTool with allowedTools: Write runs without asking, Bash asks and is denied",
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/hello.txt`, content: "hello\n" }),
        toolCall("Bash", { command: "cat hello.txt", description: "Show the file" }),
        text("Written; I was not allowed to show it."),
      ]),
  },
} satisfies ProgramCase;
