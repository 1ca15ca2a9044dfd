import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "maxTurns: 1 with a tool call: error_max_turns",
  files: { "notes.txt": "short\n" },
  script: {
    main: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("It is short.")]),
  },
} satisfies ProgramCase;
