import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "a PostToolUse hook returns continue: false: how the query ends (subtype, is_error, result)",
  files: { "notes.txt": "one line\n" },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Read", { file_path: `${request.work}/notes.txt` }),
        text("It has one line."),
      ]),
  },
} satisfies ProgramCase;
