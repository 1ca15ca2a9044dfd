import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "canUseTool without allowedTools: Read needs no approval, Write asks and is denied; the options it receives",
  files: { "notes.txt": "remember me\n" },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Read", { file_path: `${request.work}/notes.txt` }),
        toolCall("Write", { file_path: `${request.work}/copy.txt`, content: "remember me\n" }),
        text("I could not write the copy."),
      ]),
  },
} satisfies ProgramCase;
