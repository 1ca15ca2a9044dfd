import { agentCall, byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

const TASK = "Read notes.txt and say what it holds.";

export default {
  what: "every documented hook event: which fire, with what input, in which order",
  files: { "notes.txt": "hello\n" },
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [
        toolCall("Read", { file_path: `${request.work}/missing.txt` }),
        agentCall({ description: "Read notes", prompt: TASK }),
        text("missing.txt does not exist; notes.txt says hello."),
      ]),
    subAgent: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("It says hello.")]),
  },
} satisfies ProgramCase;
