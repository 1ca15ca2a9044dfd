import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "a Read call: the tool result line (tool_use_result), the answer after it",
  args: ["-p", "What does notes.txt say?", "--output-format", "stream-json", "--verbose"],
  files: { "notes.txt": "The meeting is at noon.\n" },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Read", { file_path: `${request.work}/notes.txt` }),
        text("It says the meeting is at noon."),
      ]),
  },
} satisfies CliScenario;
