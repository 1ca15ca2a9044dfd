import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "permissionMode acceptEdits: Write runs, Bash without canUseTool is denied",
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/todo.txt`, content: "- run the tests\n" }),
        toolCall("Bash", { command: "npm test", description: "Run the tests" }),
        text("Created todo.txt; I could not run the tests."),
      ]),
  },
} satisfies ProgramCase;
