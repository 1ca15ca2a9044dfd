import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "a PostToolBatch callback after a Read: its input, and its additionalContext reaching the next request",
  files: { "a.txt": "alpha\n" },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Read", { file_path: `${request.work}/a.txt` }),
        text("The codename is ORANGE-KITE-4."),
      ]),
  },
} satisfies ProgramCase;
