import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "canUseTool with allowedTools: Write runs without asking, Bash asks and is denied",
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/hello.txt`, content: "hello\n" }),
        toolCall("Bash", { command: "npm test", description: "Run the tests" }),
        text("Written; I was not allowed to run the tests."),
      ]),
  },
} satisfies ProgramCase;
