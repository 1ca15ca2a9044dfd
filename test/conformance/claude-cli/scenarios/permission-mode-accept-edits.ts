import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--permission-mode acceptEdits: a Write and an Edit change the files",
  args: [
    "-p",
    "Create out.txt, then fix the typo in notes.txt.",
    "--permission-mode",
    "acceptEdits",
    "--output-format",
    "stream-json",
    "--verbose",
  ],
  files: { "notes.txt": "teh plan\n" },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Read", { file_path: `${request.work}/notes.txt` }),
        toolCall("Write", { file_path: `${request.work}/out.txt`, content: "hi\n" }),
        toolCall("Edit", { file_path: `${request.work}/notes.txt`, old_string: "teh", new_string: "the" }),
        text("Done."),
      ]),
  },
} satisfies CliScenario;
