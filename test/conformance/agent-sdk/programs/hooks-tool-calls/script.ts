import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "PreToolUse (with a matcher) and PostToolUse hooks around a Read: their inputs and their order",
  files: { "notes.txt": "alpha\nbeta\ngamma\n" },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Read", { file_path: `${request.work}/notes.txt` }, "Reading it."),
        text("notes.txt has 3 lines."),
      ]),
  },
} satisfies ProgramCase;
