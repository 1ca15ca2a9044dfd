import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const TASK = "Read notes.txt and report its first line.";

export default {
  what: "an Agent call without subagent_type: which agent Claude Code starts (general-purpose, its own conversation) and what it sees",
  args: ["-p", "Ask a helper what notes.txt says.", "--output-format", "stream-json", "--verbose"],
  files: { "notes.txt": "first line\nsecond line\n" },
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [
        toolCall("Agent", { description: "Read notes", prompt: TASK, run_in_background: false }),
        text("It starts with: first line."),
      ]),
    subAgent: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("first line")]),
  },
} satisfies CliScenario;
