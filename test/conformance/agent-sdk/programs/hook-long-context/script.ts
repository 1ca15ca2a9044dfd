import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

const LINE = "x".repeat(299);

export default {
  what: "a PostToolBatch callback whose additionalContext is over 10,000 characters: the model gets its size, the saved file and a preview ending at a line break",
  files: { "a.txt": "alpha\n" },
  lastRequestTexts: [
    `CTXB\n${`${LINE}\n`.repeat(40)}`,
    "Output too large (11.7KB). Full output saved to: ",
    `Preview (first 2KB):\nCTXB\n${`${LINE}\n`.repeat(5)}${LINE}\n...\n</persisted-output>`,
  ],
  script: {
    main: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/a.txt` }), text("Done.")]),
  },
} satisfies ProgramCase;
