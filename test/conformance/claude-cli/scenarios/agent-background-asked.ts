import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const TASK = "Count the words in notes.txt.";

export default {
  what: "an Agent call with run_in_background: true (background on both sides): the call's answer, the task messages, and the second turn and result the task notification starts",
  args: ["-p", "Have a helper count the words in notes.txt.", "--output-format", "stream-json", "--verbose"],
  files: { "notes.txt": "one two three\n" },
  script: {
    tasks: [TASK],
    main: (request) =>
      request.lastUserText?.includes("task-notification")
        ? text("The helper counted 3 words.")
        : byTurn(request, [
            toolCall("Agent", {
              description: "Count words",
              prompt: TASK,
              subagent_type: "general-purpose",
              run_in_background: true,
            }),
            text("The helper is on it."),
          ]),
    subAgent: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("3 words.")]),
  },
} satisfies CliScenario;
