import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--max-turns 1 with a tool call: the error_max_turns result and the exit code",
  args: ["-p", "Read notes.txt.", "--max-turns", "1", "--output-format", "json"],
  files: { "notes.txt": "hello\n" },
  script: {
    main: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("It says hello.")]),
  },
} satisfies CliScenario;
