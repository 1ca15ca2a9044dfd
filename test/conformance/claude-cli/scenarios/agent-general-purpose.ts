import { agentCall, byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const TASK = "Read notes.txt and report its first line.";

export default {
  what: "a general-purpose sub-agent: task lines, its own messages, the parent's answer",
  args: ["-p", "Ask a helper what notes.txt says.", "--output-format", "stream-json", "--verbose"],
  files: { "notes.txt": "first line\nsecond line\n" },
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [
        agentCall({ description: "Read notes", prompt: TASK }),
        text("It starts with: first line."),
      ]),
    subAgent: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("first line")]),
  },
} satisfies CliScenario;
