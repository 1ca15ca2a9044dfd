import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

const TASK = "Count the words in notes.txt.";

export default {
  what: "a sub-agent the model leaves in the background (no run_in_background): messages and results",
  files: { "notes.txt": "one two three\n" },
  script: {
    tasks: [TASK],
    main: (request) =>
      request.lastUserText?.includes("task-notification")
        ? text("The helper counted 3 words.")
        : byTurn(request, [
            toolCall("Agent", { description: "Count words", prompt: TASK, subagent_type: "general-purpose" }),
            text("The helper is on it."),
          ]),
    subAgent: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("3 words.")]),
  },
} satisfies ProgramCase;
