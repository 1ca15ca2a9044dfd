import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--debug with a tool call: what a one-shot run prints besides its answer (stderr) and whether the requests change",
  args: ["-p", "Read notes.txt.", "--debug", "--output-format", "json"],
  files: { "notes.txt": "hello\n" },
  script: {
    main: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("It says hello.")]),
  },
} satisfies CliScenario;
