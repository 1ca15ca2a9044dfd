import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "a PermissionRequest hook decides before canUseTool: allow (Write), deny (Bash), no answer (Write to notes.txt is canUseTool's); what it receives",
  files: { "notes.txt": "remember me\n" },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Read", { file_path: `${request.work}/notes.txt` }),
        toolCall("Write", { file_path: `${request.work}/copy.txt`, content: "remember me\n" }),
        toolCall("Bash", { command: "npm test", description: "Run the tests" }),
        toolCall("Write", { file_path: `${request.work}/notes.txt`, content: "Remember me\n" }),
        text("Done."),
      ]),
  },
} satisfies ProgramCase;
