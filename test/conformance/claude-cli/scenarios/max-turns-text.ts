import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--max-turns 1 in text mode: what a script reads on stdout and stderr",
  args: ["-p", "Read notes.txt.", "--max-turns", "1"],
  files: { "notes.txt": "hello\n" },
  script: {
    main: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("It says hello.")]),
  },
} satisfies CliScenario;
